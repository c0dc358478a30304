"""The words of a recommendation: how far to trust the trusted predictor, and why (the cases of
:func:`.recommend.choose_predictor`, each tied to docs/method.md §3 and the claims)."""

from __future__ import annotations

from entropic_bound.cli.scan import DEFAULT_ESTIMATOR
from entropic_bound.core.estimators import energy_tau


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
    share = preds["P_static"].get("static_fit_share")
    if case == "static":
        confidence = "exact"
        why = (
            f"one static kernel explains the data (static-fit share {share:.4f} >= {th.static_share}): "
            "the mixing does not depend on the input, so the rank of that kernel ("
            + (
                "its log-inversion, as M̂ is positive with equal row sums like a softmax"
                if preds["P_static"]["softmax_kernel"]
                else "svd of M̂"
            )
            + ") is the bound; for a positional QK kernel P A Pᵀ it is the rank of A"
        )
    elif case == "invert":
        confidence = "exact at zero noise"
        why = (
            "the data look softmax-like, the value map is the identity (--value-known) and n <= d, "
            "where inverting the softmax recovers the logits X A Xᵀ/√d exactly without noise; the "
            "log amplifies noise on small probabilities (below 50% exact already at σ = 0.01 in "
            "the paper's frontier), so trust it only on clean data"
        )
    elif case == "linear":
        why = (
            "the data look linear-attention-like and n >= d, where Z_b = X̃_b⁺Y_b = A(X_bᵀX_b/n)V, "
            "so col(Σ_b Z_b Z_bᵀ) = col(A) exactly, whatever the value map"
        )
        eps = noise.get("share_of_attn_energy")
        tau = energy_tau(estimator)
        left_out = 1 - tau if tau is not None else 0.01
        if eps is None:
            confidence = "exact at zero noise"
            why += "; the noise level could not be estimated, and noise raises the spectrum's floor"
        elif eps <= left_out / 2:
            confidence = "exact"
        else:
            confidence = "approximate (noise)"
            why += (
                f"; but noise holds ≈ {eps:.1%} of P_attn's spectrum energy, more than the "
                f"{left_out:.0%} the cut may leave out, so the rank also counts noise directions "
                "and is an upper bound"
                + (
                    " (noise is amplified as n approaches d: sequences with n >= 2d fix it)"
                    if n < 2 * d
                    else ""
                )
            )
    elif case == "softmax":
        confidence = "first-order"
        why = (
            "the data look softmax-like and n > d: centring the tokens (J X) removes softmax's "
            "uniform part, so the spectrum is A's to first order in the attention scale β; "
            "sharper attention or noise spreads it, so energy ranks may over-count (compare the "
            "estimators above)"
        )
    elif case == "softmax_short":
        confidence = "low"
        why = (
            "no predictor is reliable here: softmax-like data need n > d for the centred P_attn, "
            "or, when the value map is the identity, --value-known with n <= d for P_invert; the "
            "P_attn number is for orientation only"
        )
    elif case == "linear_short":
        confidence = "low"
        why = (
            "P_attn is exact only when n >= d; with n < d each sequence shows the kernel only "
            "through X's row space, so longer sequences (n >= d) are needed for an exact answer"
        )
    else:
        confidence = "low"
        why = "Y has no token-dependent part that attention could produce: there is nothing to attend to"
    if name == "P_attn" and conditioning["dominated"] and case != "undetermined":
        confidence = "unreliable"
        why += (
            f"; but sequence {conditioning['sequence']} alone holds "
            f"{conditioning['max_share']:.0%} of P_attn's energy ({conditioning['max_over_mean']:.0f}"
            " times the mean): near-singular token matrices amplify noise or the non-linear part "
            "when n is close to d, so the spectrum reflects a few sequences; use sequences with "
            "n >= 2d, or drop ill-conditioned ones"
        )
    if (tau := energy_tau(estimator)) is not None:
        est_why = (
            f"{estimator} is the least k whose top-k singular values hold {tau:.0%} of the "
            "spectrum's energy: for the static surrogate exactly the least rank whose excess "
            f"risk is at most {1 - tau:.0%} (docs/method.md §1)"
            + (
                "; the paper's default, as the estimator robust to softmax distortion (claim C8)"
                if estimator == DEFAULT_ESTIMATOR
                else "; chosen with --estimator"
            )
        )
    else:
        est_why = f"{estimator} was chosen with --estimator (rounded to the nearest integer)"
    return {"confidence": confidence, "why": why, "why_estimator": est_why}
