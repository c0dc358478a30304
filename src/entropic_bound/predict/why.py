"""The words of a recommendation: how far to trust the trusted predictor, and why (the cases of
:func:`.recommend.choose_predictor`, each tied to docs/method.md §3 and the claims)."""

from __future__ import annotations

from entropic_bound.core.estimators import energy_tau
from entropic_bound.predict.scan import DEFAULT_ESTIMATOR

#: the causal linear fit's residual, as a share of the signal rms, above which its rank is
#: approximate (noise)
CAUSAL_RESIDUAL = 0.1

#: (confidence, why) of the cases whose words do not depend on the data
_FIXED = {
    "invert": (
        "exact at zero noise",
        "the data look softmax-like, the value map is the identity (--value-known) and n <= d, "
        "where inverting the softmax recovers the logits X A Xᵀ/√d exactly without noise; the "
        "log amplifies noise on small probabilities (below 50% exact already at σ = 0.01 in "
        "the paper's frontier), so trust it only on clean data",
    ),
    "softmax": (
        "first-order",
        "the data look softmax-like and n > d: centring the tokens (J X) removes softmax's "
        "uniform part, so the spectrum is A's to first order in the attention scale β; "
        "sharper attention or noise adds a flat floor to it, which energy ranks count "
        "(compare the estimators above)",
    ),
    "softmax_short": (
        "low",
        "no predictor is reliable here: softmax-like data need n > d for the centred P_attn, "
        "or, when the value map is the identity, --value-known with n <= d for P_invert; the "
        "P_attn number is for orientation only",
    ),
    "linear_short": (
        "low",
        "P_attn is exact only when n >= d; with n < d each sequence shows the kernel only "
        "through X's row space, so longer sequences (n >= d) are needed for an exact answer",
    ),
    "causal_softmax": (
        "low",
        "under the causal mask each row i has its own map, so P_attn fits the rows "
        "y_i = x̄_{≤i}ᵀV + x_iᵀ A Q_i W (Q_i the prefix covariance, first order in β of causal "
        "softmax attention) by least squares over the rows; svd(Â) is A's spectrum in the data's "
        "scale to first order, plus a tail from the non-linear part and from noise that decays "
        "without a gap, so the answer is the fit's own knee, held out (the least rank whose "
        "residual on sequences the fit did not see is within 10 % of the ablation's gap)",
    ),
    "undetermined": (
        "low",
        "Y has no token-dependent part that attention could produce: there is nothing to attend to",
    ),
}


def explain(
    n: int,
    d: int,
    preds: dict,
    name: str,
    case: str,
    noise: dict,
    conditioning: dict,
    estimator: str,
    th,
) -> dict:
    """Confidence, why the trusted predictor (``case`` of recommend.choose_predictor) and why the
    estimator, in words a user can check against docs/method.md."""
    if case == "static":
        confidence, why = _static(preds, th)
    elif case == "invert" and preds["P_invert"].get("spectrum_kind", "").endswith("(causal)"):
        confidence, why = _FIXED["invert"]
        why += (
            "; under the causal mask the log is read on the lower triangle only, each row "
            "centred over its own j <= i, which removes its log-sum-exp exactly"
        )
    elif case in ("linear", "causal_linear"):
        confidence, why = _linear(n, d, noise, estimator, causal=case == "causal_linear")
    else:
        confidence, why = _FIXED[case]
    if name == "P_attn" and conditioning["dominated"] and case != "undetermined":
        confidence = "unreliable"
        why += (
            f"; but sequence {conditioning['sequence']} alone holds "
            f"{conditioning['max_share']:.0%} of P_attn's energy ({conditioning['max_over_mean']:.0f}"
            " times the mean): near-singular token matrices amplify noise or the non-linear part "
            "when n is close to d, so the spectrum reflects a few sequences; use sequences with "
            "n >= 2d, or drop ill-conditioned ones"
        )
    return {"confidence": confidence, "why": why, "why_estimator": _estimator_words(estimator)}


def _static(preds: dict, th) -> tuple[str, str]:
    share = preds["P_static"].get("static_fit_share")
    return "exact", (
        f"one static kernel explains the data (static-fit share {share:.4f} >= {th.static_share}): "
        "the mixing does not depend on the input, so the rank of that kernel ("
        + (
            "its log-inversion, as M̂ is positive with equal row sums like a softmax"
            if preds["P_static"]["softmax_kernel"]
            else "svd of M̂"
        )
        + ") is the bound; for a positional QK kernel P A Pᵀ it is the rank of A"
    )


def _linear(n: int, d: int, noise: dict, estimator: str, causal: bool) -> tuple[str, str]:
    if causal:
        why = (
            "the data look like causal linear attention: row i is y_iᵀ = x_iᵀ A P_i V with P_i the "
            "prefix second moment (1/n) Σ_{j≤i} x_j x_jᵀ, known from X, so the least squares of "
            "(A, V) over the rows fits it exactly and svd(Â) is A's spectrum, whatever the value "
            "map"
        )
    else:
        why = (
            "the data look linear-attention-like and n >= d, where Z_b = X̃_b⁺Y_b = A(X_bᵀX_b/n)V, "
            "so col(Σ_b Z_b Z_bᵀ) = col(A) exactly, whatever the value map"
        )
    eps = noise.get("share_of_attn_energy")
    tau = energy_tau(estimator)
    left_out = 1 - tau if tau is not None else 0.01
    if causal:
        rel = noise.get("relative")
        if rel is not None and rel > CAUSAL_RESIDUAL:
            return "approximate (noise)", why + (
                f"; but the residual of the fit is {rel:.2g} of the signal rms: noise spreads the "
                "spectrum, so read the gap and the safe rank below"
            )
        return "exact", why
    if eps is None:
        return "exact at zero noise", why + (
            "; the noise level could not be estimated, and noise raises the spectrum's floor"
        )
    if eps <= left_out / 2:
        return "exact", why
    return "approximate (noise)", why + (
        f"; but noise holds ≈ {eps:.1%} of P_attn's spectrum energy, more than the "
        f"{left_out:.0%} the cut may leave out, so the rank also counts noise directions "
        "and is an upper bound"
        + (
            " (noise is amplified as n approaches d: sequences with n >= 2d fix it)"
            if n < 2 * d
            else ""
        )
    )


def _estimator_words(estimator: str) -> str:
    if (tau := energy_tau(estimator)) is not None:
        return (
            f"{estimator} is the least k whose top-k singular values hold {tau:.0%} of the "
            "spectrum's energy: for the static surrogate exactly the least rank whose excess "
            f"risk is at most {1 - tau:.0%} (docs/method.md §1)"
            + (
                "; the paper's default, as the estimator robust to softmax distortion (claim C8)"
                if estimator == DEFAULT_ESTIMATOR
                else "; chosen with --estimator"
            )
        )
    if estimator == "floor":
        return (
            "floor is the floor-aware rank: the singular values above 1.43 × the median of the "
            "spectrum's bulk (Gavish–Donoho's threshold, docs/method.md §2); the default for "
            "softmax-like data, where P_attn's spectrum is A's over a flat floor that r_E(0.99) "
            "counts (X3: exact far more often on held-out frontier seeds; docs/method.md §8)"
        )
    if estimator == "held_out_knee":
        return (
            "held_out_knee is the causal fit's own knee, held out: the fit repeated on the even- "
            "and on the odd-numbered sequences, each half's kernel cut to every rank in its data's "
            "scale and read on the other half; the least rank whose held-out residual is within "
            "10 % of the ablation's gap of the best rank's (docs/method.md §3, \"The fit's own "
            "knee\"): the knee's own question, asked of the fitted head on data it did not see"
        )
    return f"{estimator} was chosen with --estimator (rounded to the nearest integer)"
