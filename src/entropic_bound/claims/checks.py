"""Checks several claims share: deficiency (C1, C7), achievability (C2, C7), recovery (C3, C7)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from entropic_bound.analysis import (
    estimate_finite,
    exact_summary,
    full_rank_students,
    own_class_curves,
    pretty_estimator,
    spectra_matrix,
)
from entropic_bound.claims.verdict import (
    Check,
    absent_rungs,
    bounded,
    fmt,
    nan_note,
    rate,
    undecided_note,
    unknown_cells,
)
from entropic_bound.core.estimators import round_rank

__all__ = [
    "absent_rungs",
    "achievability",
    "achievability_v2",
    "deficiency",
    "deficiency_v2",
    "knee_v2",
    "recovery",
    "recovery_v2",
    "sparse_note",
]


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
    head = (f"{rung} max R(r*)", float(at.max()), "<=", max_risk, len(at))
    return Check(
        bool(ok == len(at)),
        f"{rung}: R(r*) ≤ {fmt(max_risk)} on {ok}/{len(at)} tasks (max {fmt(at.max())})"
        + nan_note(at, "R"),
        headline=head,
    )


def recovery(metrics: pd.DataFrame, rung: str, claims: dict) -> Check:
    """The claims estimator on the learned kernels of full-rank students = r* on ≥ C3's rate;
    a non-finite learned spectrum is an estimate of NaN: an unknown student, decided by the
    bounding rule (the stated rate counts it as a miss)."""
    est, min_rate = claims["estimator"], claims["C3"]["min_exact_rate"]
    full = full_rank_students(metrics)
    full = full[full["rung"] == rung]
    if full.empty:
        return Check(None, f"{rung}: no full-rank student")
    r_hat = estimate_finite(spectra_matrix(full["spectrum"]), est, tol=claims["numerical_tol"])
    s = exact_summary(r_hat, full["r_star"])
    head = (
        f"{rung} learned {pretty_estimator(est)} = r* rate",
        s["exact_rate"],
        ">=",
        min_rate,
        s["n"],
    )
    hit = pd.Series(
        np.where(np.isnan(r_hat), np.nan, round_rank(r_hat) == full["r_star"].to_numpy()),
        index=full["task_id"] + "/seed " + full["seed"].astype(str),
    )
    passed = bounded(hit, lambda filled: filled.mean() >= min_rate)
    return Check(
        passed,
        f"{rung} learned {pretty_estimator(est)} = r*: {rate(s)}"
        + unknown_cells(hit, "students")
        + undecided_note(passed),
        headline=head,
    )


# ---------------------------------------------------------------- registration v2


def deficiency_v2(curves: pd.DataFrame, bounds: pd.DataFrame, rung: str, v2: dict) -> Check:
    """Every trained (task, r < r*) cell of the rung with a class bound has median R ≥
    factor·R*_c(r); a student that beats its bound lowers it (and is counted)."""
    from entropic_bound.claims import theory

    cells = theory.with_bounds(curves, bounds, v2["bound_rounding"])
    cells = cells[(cells["rung"] == rung) & (cells["rank"] < cells["r_star"])]
    ratio = cells["R"] / cells["bound"]
    k = v2["deficiency_factor"]
    check = theory.counted(
        cells["R"] >= k * cells["bound"],
        1.0,
        v2,
        f"{rung}: R ≥ {fmt(k)}·R*_c(r) on (task, r < r*) cells",
        "",
    )
    check.measured += (
        f" (R/R*_c min {fmt(ratio.min())}, median {fmt(ratio.median())}; "
        f"bounds beaten by a student: {int(cells['beaten'].sum())})"
    )
    check.headline = (f"{rung} min R/R*_c(r)", float(ratio.min()), ">=", k, len(cells))
    return check


def achievability_v2(curves: pd.DataFrame, bounds: pd.DataFrame, rung: str, v2: dict) -> Check:
    """Median R at r = r* ≤ the task's ε_task on every task of the rung (NaN fails)."""
    from entropic_bound.claims import theory

    own = own_class_curves(curves)
    own = own[own["rung"] == rung]
    eps = theory.epsilon_task(own, bounds, v2)
    at = own[own["rank"] == own["r_star"]]
    limit = at["task_id"].map(eps)
    check = theory.counted(at["R"] <= limit, 1.0, v2, f"{rung}: R(r*) ≤ ε_task", "")
    check.measured += f" (max R(r*) {fmt(at['R'].max())}, min ε_task {fmt(limit.min())})"
    worst = (at["R"] / limit).max()
    check.headline = (f"{rung} max R(r*)/ε_task", float(worst), "<=", 1.0, len(at))
    return check


def recovery_v2(metrics: pd.DataFrame, rung: str, v2: dict, run: dict | None, need: float):
    """The v2 estimator (admitted on the task grid) on learned full-rank kernels = r*."""
    from entropic_bound.claims import theory

    est = v2["estimator"]
    bad = theory.refusal_on_task_grid(est, run, v2)
    if bad is not None:
        return [bad]
    full = full_rank_students(metrics)
    full = full[full["rung"] == rung]
    r_hat = estimate_finite(spectra_matrix(full["spectrum"]), est, tol=v2["numerical_tol"])
    hit = pd.Series(np.floor(r_hat + 0.5) == full["r_star"].to_numpy())
    return [
        theory.counted(
            hit, need, v2, f"{rung} learned {pretty_estimator(est)} = r*", f"{rung} recovery rate"
        )
    ]


def knee_v2(curves: pd.DataFrame, bounds: pd.DataFrame, rung: str, v2: dict, need: float) -> Check:
    """r_emp (the least rank whose median R ≤ ε_task) = r* on ≥ ``need`` of the rung's tasks."""
    from entropic_bound.analysis import empirical_knees
    from entropic_bound.claims import theory

    own = curves[curves["rung"] == rung]
    knees = empirical_knees(own, theory.epsilon_task(own, bounds, v2))
    return theory.counted(
        knees["r_emp"] == knees["r_star"],
        need,
        v2,
        f"{rung}: r_emp(ε_task) = r*",
        f"{rung} knee rate",
    )
