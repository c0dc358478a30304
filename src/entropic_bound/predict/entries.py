"""The report entry of every data-only predictor of a prediction (docs/method.md §3): its
spectrum, every estimate (the paper's estimators and the opt-in floor-aware rank), or why it was
skipped or refused (d_v ≠ d, the causal mask)."""

from __future__ import annotations

import numpy as np
import torch

from entropic_bound.core.estimators import OPT_IN_ESTIMATORS, all_estimators, estimate
from entropic_bound.predict.base import log_inversion_spectrum
from entropic_bound.predict.causal import fit_causal, fit_knee, held_out_truncation
from entropic_bound.predict.causal_signals import HELD_OUT_FRACTION, HELD_OUT_KNEE
from entropic_bound.predict.inversion import predict_inversion
from entropic_bound.predict.placement import softmax_kernel
from entropic_bound.predict.scan import AUTO_ESTIMATOR
from entropic_bound.predict.sources import InputError
from entropic_bound.predict.static import predict_static

#: the opt-in estimators the report shows beside the paper's (the floor-aware rank)
OPT_IN = tuple(OPT_IN_ESTIMATORS)


def _estimates(spectrum: np.ndarray, estimator: str) -> dict[str, float]:
    est = {k: float(v) for k, v in all_estimators(spectrum, extra=OPT_IN).items()}
    if estimator not in est and estimator != AUTO_ESTIMATOR:
        est[estimator] = float(estimate(spectrum, estimator))
    return est


def _ok(spec: np.ndarray, used: int, kind: str, estimator: str, **extra) -> dict:
    return {
        "status": "ok",
        "sequences_used": used,
        **extra,
        "spectrum_kind": kind,
        "spectrum": spec.tolist(),
        "estimates": _estimates(spec, estimator),
    }


def predictor_entries(acc, gathered, plan, mix, settings, notes, th) -> tuple[dict, object]:
    """The report entry of every predictor (and the causal fit, or None); notes on subsamples."""
    est, B = settings.estimator, plan.B
    fit = None
    if settings.causal:
        entry, fit = causal_entry(gathered["causal"], plan, mix, est)
        if plan.n_causal < B:
            notes.append(
                f"the causal P_attn fitted a seeded subsample (seed {settings.seed}) of "
                f"{plan.n_causal} of {B} sequences ({plan.n_causal * plan.n} rows), in "
                f"{fit.iterations} L-BFGS iterations"
            )
    else:
        spec = acc.spectrum()[0].numpy()
        c = "J X_b" if plan.n > plan.d else "X_b"
        kind = f"sqrt(eig(sum_b Z_b Z_b^T)), Z_b = pinv({c}) Y_b"
        basis = gathered.get("basis")
        if basis is not None:  # the tokens whitened, in the directions they vary in
            k = basis.shape[1]
            spec = np.concatenate([spec, np.zeros(plan.d - k)])
            kind = kind.replace("J X_b", "J X_b C^-1/2 (C: the tokens' covariance)")
        if basis is not None and k < plan.d:
            notes.append(
                f"the centred tokens vary in {k} of their {plan.d} directions (a LayerNorm's "
                "output keeps x·(1/γ) fixed; a constant feature does too): P_attn read them in "
                f"those {k}, and the last {plan.d - k} singular values are 0 by construction"
            )
        entry = _ok(spec, plan.n_attn, kind, est, centred=plan.n > plan.d)
    preds = {"P_attn": entry}
    if plan.n_attn < B:
        notes.append(
            f"the P_attn pass and the diagnostics used a seeded subsample (seed {settings.seed}) "
            f"of {plan.n_attn} of {B} sequences (--attn-max-sequences; 0 uses all)"
        )
    preds["P_static"] = static_entry(
        gathered["static"], plan, settings, notes, th, gathered.get("basis")
    )
    preds["P_invert"] = invert_entry(gathered["invert"], plan, settings, notes)
    return preds, fit


def held_out(data, fit, prefix: str) -> dict:
    """The causal fit again on the even- and on the odd-numbered sequences alone (one start: the
    whole fit's kernel), and each half's kernel cut to every rank in its own data's scale, read
    on the other half (value map and prefix-mean term solved there): their mean residual share
    by rank (``held_out_residuals``) and the halves' spectra. Empty when a half has too few rows
    to fit."""
    X, Y = (torch.as_tensor(a, dtype=torch.float64) for a in data)
    parts = [(X[k::2].contiguous(), Y[k::2].contiguous()) for k in (0, 1)]
    try:
        halves = [fit_causal(*part, prefix=prefix, starts=1, init=fit.kernel) for part in parts]
    except ValueError:
        return {}
    crossed = [held_out_truncation(halves[k], *parts[1 - k], prefix) for k in (0, 1)]
    return {
        "held_out_residuals": ((crossed[0] + crossed[1]) / 2).tolist(),
        "half_spectra": [h.spectrum.tolist() for h in halves],
    }


def causal_entry(data, plan, mix, est) -> tuple[dict, object]:
    """P_attn under the causal mask (predict/causal.py): linear form, or the first-order softmax
    form (prefix covariance and prefix mean) for softmax-like data."""
    prefix = "covariance" if mix["label"] == "softmax-like" else "moment"
    try:
        fit = fit_causal(*data, prefix=prefix)
    except ValueError as exc:
        raise InputError(str(exc), "or drop --causal") from None
    spec = fit.spectrum.numpy()
    kind = "svd(A_hat) of the causal per-row fit y_i = x_i^T A P_i W" + (
        " + prefix mean (P_i: prefix covariance)" if prefix == "covariance" else ""
    )
    entry = _ok(spec, plan.n_causal, kind, est, causal=True, iterations=fit.iterations)
    entry["converged"] = fit.converged
    entry["residual_share"] = fit.resid / fit.target if fit.target > 0 else 0.0
    entry["truncation_residuals"] = (fit.curve / fit.target).tolist() if fit.target > 0 else []
    entry["starts"] = [
        {"residual": r / fit.target if fit.target > 0 else 0.0, "spectrum": s.tolist()}
        for r, s in fit.starts
    ]
    entry.update(held_out(data, fit, prefix))
    if entry.get("held_out_residuals"):
        entry["estimates"][HELD_OUT_KNEE] = float(
            fit_knee(entry["held_out_residuals"], HELD_OUT_FRACTION)
        )
    return entry, fit


def static_entry(data, plan, settings, notes, th, basis=None) -> dict:
    """P_static's entry: its spectrum (log-inverted when M̂ is a softmax) and static-fit share;
    under the causal mask only the share (the rank of L ⊙ S is not S's). Tokens that leave a
    direction out (``basis``, scan.token_basis) make vec(X) dependent whatever B is: P_static
    is then skipped with the reason, not the whole prediction refused."""
    if data is None:
        return {"status": plan.static_skip, "static_fit_share": None}
    try:
        st = predict_static(*data)
    except ValueError as exc:
        if basis is not None and basis.shape[1] < plan.d:
            return {
                "status": f"skipped: the tokens vary in {basis.shape[1]} of their {plan.d} "
                "directions, so P_static's inputs vec(X) are linearly dependent whatever the "
                "number of sequences",
                "static_fit_share": None,
            }
        raise InputError(str(exc), "or pass --no-static to skip P_static") from None
    share = float(st["static_fit_share"])
    if plan.n_static < plan.B:
        notes.append(
            f"P_static used a seeded subsample of {plan.n_static} of {plan.B} sequences "
            f"({settings.static_oversample} × n·d; --static-oversample)"
        )
    if settings.causal:
        return {
            "status": "rank not read under the causal mask: a static mixing M = L ⊙ S (L the "
            "lower-triangular mask) is full rank whatever S's rank, so svd(M̂) says nothing "
            f"about the kernel; static-fit share {share:.4f}",
            "static_fit_share": share,
            "softmax_kernel": False,
        }
    soft = softmax_kernel(st["M_hat"], th)
    spec = (
        log_inversion_spectrum(torch.as_tensor(st["M_hat"])).numpy()
        if soft
        else np.asarray(st["spectrum"])
    )
    kind = "log-inversion of M_hat (positive, equal row sums: a softmax)" if soft else "svd(M_hat)"
    return _ok(
        spec,
        plan.n_static,
        kind,
        settings.estimator,
        static_fit_share=share,
        softmax_kernel=soft,
    )


def invert_entry(data, plan, settings, notes) -> dict:
    if data is None:
        return {"status": plan.invert_skip}
    try:
        spec = np.asarray(predict_inversion(*data, causal=settings.causal)["spectrum"])
    except ValueError as exc:
        raise InputError(str(exc), "or drop --value-known") from None
    if plan.n_invert < plan.B:
        notes.append(
            f"P_invert used a seeded subsample of {plan.n_invert} of {plan.B} sequences "
            "(--invert-max-sequences)"
        )
    kind = "svd(A_hat), log-inversion with V = I" + (
        ", rows centred over j <= i (causal)" if settings.causal else ""
    )
    return _ok(spec, plan.n_invert, kind, settings.estimator)
