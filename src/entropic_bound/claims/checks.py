"""Checks several claims share: deficiency (C1, C7), achievability (C2, C7), recovery (C3, C7)."""

from __future__ import annotations

import pandas as pd

from entropic_bound.analysis import (
    estimate_finite,
    exact_summary,
    full_rank_students,
    own_class_curves,
    pretty_estimator,
    spectra_matrix,
)
from entropic_bound.claims.verdict import Check, absent_rungs, fmt, nan_note, rate

__all__ = ["absent_rungs", "achievability", "deficiency", "recovery", "sparse_note"]


def deficiency(curves: pd.DataFrame, rung: str) -> pd.DataFrame:
    """Own-class median R at every rank r < r* of the rung's tasks where R*(r) > 0, with
    R/R*(r); a NaN R stays (NaN ratio) and fails every comparison."""
    own = own_class_curves(curves)
    d = own[(own["rung"] == rung) & (own["rank"] < own["r_star"]) & (own["R_theory"] > 0)]
    return d.assign(ratio=d["R"] / d["R_theory"])


def sparse_note(d: pd.DataFrame, curves: pd.DataFrame, rung: str) -> str:
    """How many of the (task, r < r*) cells were trained, when a rank search skipped some."""
    own = own_class_curves(curves)
    tasks = own[own["rung"] == rung].drop_duplicates("task_id")
    cells = int((tasks["r_star"] - 1).clip(lower=0).sum())
    if len(d) >= cells:
        return ""
    return f" [rank search: tests the {len(d)} trained of {cells} (task, r < r*) cells]"


def achievability(curves: pd.DataFrame, rung: str, max_risk: float) -> Check:
    """Median R at r = r* ≤ max_risk on every task of the rung (NaN R fails)."""
    own = own_class_curves(curves)
    at = own[(own["rung"] == rung) & (own["rank"] == own["r_star"])]["R"]
    if at.empty:
        return Check(None, f"{rung}: no student at r = r*")
    ok = int((at <= max_risk).sum())
    return Check(
        bool(ok == len(at)),
        f"{rung}: R(r*) ≤ {fmt(max_risk)} on {ok}/{len(at)} tasks (max {fmt(at.max())})"
        + nan_note(at, "R"),
    )


def recovery(metrics: pd.DataFrame, rung: str, claims: dict) -> Check:
    """The claims estimator on the learned kernels of full-rank students = r* on ≥ C3's rate;
    a non-finite learned spectrum is an estimate of NaN, a miss."""
    est, min_rate = claims["estimator"], claims["C3"]["min_exact_rate"]
    full = full_rank_students(metrics)
    full = full[full["rung"] == rung]
    if full.empty:
        return Check(None, f"{rung}: no full-rank student")
    r_hat = estimate_finite(spectra_matrix(full["spectrum"]), est, tol=claims["numerical_tol"])
    s = exact_summary(r_hat, full["r_star"])
    return Check(
        bool(s["exact_rate"] >= min_rate),
        f"{rung} learned {pretty_estimator(est)} = r*: {rate(s)}"
        + nan_note(pd.Series(r_hat), "spectra"),
    )
