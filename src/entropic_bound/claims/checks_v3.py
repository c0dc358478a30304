"""Registration v3's checks that several claims share (docs/method.md §5c): deficiency as a
magnitude (C1, C7), achievability and the knee from the best of (student seeds × restarts) at the
audited ε_task (C2, C7), recovery counted in tasks (C3, C7).

Every check expects the tasks the run's config registers; a registered task (or cell) without a
row or with a NaN counts against the claim.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from entropic_bound.analysis import (
    estimate_finite,
    full_rank_students,
    predictions_of,
    pretty_estimator,
    spectra_matrix,
)
from entropic_bound.claims import theory_v3
from entropic_bound.claims.verdict import Check, fmt


def _bounds_refusal(bounds: pd.DataFrame | None, name: str) -> Check | None:
    if theory_v3.has_best_bounds(bounds):
        return None
    return Check(None, "bounds.csv has no best-known bound (column R_best)", name=name)


def deficiency_v3(
    bounds: pd.DataFrame, tasks: pd.DataFrame, rung: str, v3: dict, run: dict, name: str
) -> Check:
    """Every registered (task, r < r*) cell that the run's bounds cover: R̂*_c(r) ≥
    factor·tail(r), tail the Eckart–Young tail of the teacher's kernel (universal; a missing
    bound fails the cell)."""
    from entropic_bound.bounds.stage import bound_ranks

    bad = _bounds_refusal(bounds, name)
    if bad is not None:
        return bad
    tasks = tasks[tasks["rung"] == rung]
    b = run["bounds"]
    mode = b["ranks"] if rung in b["deficiency_rungs"] else "knee"
    best = theory_v3.best_bound(bounds)
    kappa, k = float(run["task"]["kappa"]), v3["deficiency_factor"]
    cells = [
        (t.task_id, r, best.get((t.task_id, r), np.nan), theory_v3.tail(t.r_star, kappa, r))
        for t in tasks.itertuples(index=False)
        for r in bound_ranks(int(t.r_star), mode)
    ]
    d = pd.DataFrame(cells, columns=["task_id", "rank", "R_best", "tail"])
    ratio = d["R_best"] / d["tail"]
    ok = pd.Series(np.where(ratio.isna(), np.nan, ratio >= k), dtype="object")
    ok.index = [f"{t}@r={r}" for t, r in zip(d["task_id"], d["rank"])]
    head = (f"{rung} min R̂*_c(r)/tail(r)", float(ratio.min()), ">=", k, len(d))
    check = theory_v3.universal_check(
        name, ok, f"{rung}: R̂*_c(r) ≥ {fmt(k)}·tail(r) on (task, r < r*) cells", head, "cells"
    )
    if len(d):
        per_r = ratio.groupby(d["rank"]).min()
        check.measured += (
            f" (ratio {theory_v3.fmt_ratio(ratio)}; min per r: "
            + ", ".join(f"r={int(r)}: {fmt(v)}" for r, v in per_r.items())
            + ")"
        )
    return check


def _targets(metrics, bounds, tasks, v3):
    """Best-of students per (task, rank) and the audited ε_task of every registered task."""
    eps = theory_v3.audited_epsilon(bounds, tasks, v3)
    return theory_v3.best_of_students(metrics), eps


def achievability_v3(
    metrics: pd.DataFrame, bounds: pd.DataFrame, tasks: pd.DataFrame, rung: str, v3: dict, name
) -> Check:
    """Every registered task of the rung: the best of (seeds × restarts) at r = r* reaches the
    audited ε_task (universal; a task without a student at r* or a target fails)."""
    bad = _bounds_refusal(bounds, name)
    if bad is not None:
        return bad
    tasks = tasks[tasks["rung"] == rung]
    best, eps = _targets(metrics, bounds, tasks, v3)
    at = best[best["rank"] == best["r_star"]].set_index("task_id")["R_best_student"]
    e = eps.set_index("task_id")
    R = tasks["task_id"].map(at)
    target = tasks["task_id"].map(e["eps"])
    ok = pd.Series(np.where(R.isna() | target.isna(), np.nan, R <= target), dtype="object")
    ok.index = tasks["task_id"].to_numpy()
    worst = float((R / target).max()) if len(R) else np.nan
    head = (f"{rung} max best-of R(r*)/ε_task", worst, "<=", 1.0, len(tasks))
    check = theory_v3.universal_check(name, ok, f"{rung}: best-of R(r*) ≤ ε_task (audited)", head)
    audited = e.loc[e.index.isin(tasks["task_id"]) & e["audited"]].index
    check.measured += f" (max R(r*)/ε_task {fmt(worst)}; ε_task audited on {len(audited)} task(s)"
    check.measured += (": " + ", ".join(audited[:4]) if len(audited) else "") + ")"
    check.measured += theory_v3.stall_note(metrics, eps, rung)
    return check


def knee_v3(
    metrics: pd.DataFrame,
    bounds: pd.DataFrame,
    tasks: pd.DataFrame,
    rung: str,
    v3: dict,
    need: float,
    name: str,
) -> Check:
    """r_emp (the least rank whose best-of R ≤ the audited ε_task) = r* on ≥ ``need`` of the
    registered tasks; a task never reaching its target is a miss, one without a target or rows
    is unknown (:func:`knee_outcomes`)."""
    bad = _bounds_refusal(bounds, name)
    if bad is not None:
        return bad
    tasks = tasks[tasks["rung"] == rung]
    outcome = knee_outcomes(metrics, bounds, tasks, v3)
    return theory_v3.rate_check(
        name,
        outcome,
        need,
        v3,
        f"{rung}: r_emp(best of seeds × restarts, audited ε_task) = r*",
        f"{rung} knee rate",
    )


def recovery_v3(
    metrics: pd.DataFrame, tasks: pd.DataFrame, rung: str, v3: dict, run: dict, need, name
) -> Check:
    """The v3 estimator (admitted on the task grid) on the learned full-rank kernels = r*; a task
    counts as recovered only if every one of its student seeds is exact."""
    bad = theory_v3.estimator_refusal(run, v3["estimator"], v3, name)
    if bad is not None:
        return bad
    tasks = tasks[tasks["rung"] == rung]
    full = full_rank_students(metrics)
    full = full[full["rung"] == rung].reset_index(drop=True)
    if full.empty:
        per = pd.Series(dtype=bool)
    else:
        S = spectra_matrix(full["spectrum"])
        r_hat = estimate_finite(S, v3["estimator"], v3["numerical_tol"])
        hit = np.floor(r_hat + 0.5) == full["r_star"].to_numpy()
        exact = pd.Series(np.where(np.isnan(r_hat), np.nan, hit), dtype="object")
        per = theory_v3.combine(exact, full["task_id"])
    outcome = tasks["task_id"].map(per)
    outcome.index = tasks["task_id"].to_numpy()
    return theory_v3.rate_check(
        name,
        outcome,
        need,
        v3,
        f"{rung} learned {pretty_estimator(v3['estimator'])} = r* (every seed)",
        f"{rung} recovery rate",
    )


def knee_outcomes(
    metrics: pd.DataFrame, bounds: pd.DataFrame, tasks: pd.DataFrame, v3: dict
) -> pd.Series:
    """Per registered task (index: task_id): r_emp = r* (True or False over the trained ranks,
    as :func:`r_emp_v3` reads them), NaN where unknown cells decide it: no target (a bound is
    missing), no student row, a NaN risk at r*, or a NaN risk below r* when r* reaches the
    target. A rank below r* that reaches the target, or r* that does not, decides False
    whatever else is unknown; so does an untrained r* (a rank search's knee lies elsewhere)."""
    best, eps = _targets(metrics, bounds, tasks, v3)
    target = best["task_id"].map(eps.set_index("task_id")["eps"])
    unknown = best["R_best_student"].isna() | target.isna()
    reach = (best["R_best_student"] <= target) & ~unknown
    below, at = best["rank"] < best["r_star"], best["rank"] == best["r_star"]
    flags = pd.DataFrame(
        {
            "rows": True,
            "early": reach & below,
            "open_below": unknown & below,
            "at_reach": reach & at,
            "at_miss": ~reach & ~unknown & at,
            "at_open": unknown & at,
        }
    )
    per = flags.groupby(best["task_id"].to_numpy()).any()
    per = per.reindex(tasks["task_id"].to_numpy(), fill_value=False)
    no_target = tasks["task_id"].map(eps.set_index("task_id")["eps"]).isna().to_numpy()
    open_ = ~per["rows"] | no_target | per["at_open"] | (per["at_reach"] & per["open_below"])
    out = np.where(per["early"] | per["at_miss"], False, np.where(open_, np.nan, per["at_reach"]))
    return pd.Series(out, index=tasks["task_id"].to_numpy(), dtype="object")


def r_emp_v3(metrics: pd.DataFrame, bounds: pd.DataFrame, tasks: pd.DataFrame, v3: dict):
    """task_id -> r_emp: the least rank whose best-of (seeds × restarts) R ≤ the audited ε_task
    (absent where no rank reaches it or the task has no target)."""
    best, eps = _targets(metrics, bounds, tasks, v3)
    target = best["task_id"].map(eps.set_index("task_id")["eps"])
    return best[best["R_best_student"] <= target].groupby("task_id")["rank"].min()


def predicted_exact(
    preds: pd.DataFrame, estimator: str, predictor: str, sigma: float, tasks: pd.DataFrame
) -> pd.Series:
    """Per registered task (index: task_id): the rounded estimate of ``predictor`` at noise σ
    equals r* (True/False), NaN where the task has no row or its estimate is NaN."""
    p = predictions_of(preds, estimator, predictor, sigma)
    r = p.drop_duplicates("task_id").set_index("task_id")["r_round"]
    got = tasks["task_id"].map(r)
    out = np.where(got.isna(), np.nan, got == tasks["r_star"])
    return pd.Series(out, index=tasks["task_id"].to_numpy(), dtype="object")
