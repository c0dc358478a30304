"""Registration v4's selectors of the trained structure and the static predictor (C1–C7;
docs/method.md §5d): per registered task or cell, True, False or NaN (unknown)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from entropic_bound.analysis import (
    estimate_finite,
    full_rank_students,
    intrinsic_ranks,
    pretty_estimator,
    risk_curves,
    spectra_matrix,
    static_student_risk,
)
from entropic_bound.claims import theory, theory_v3
from entropic_bound.claims.checks_v3 import predicted_exact, r_emp_v3
from entropic_bound.claims.v4.base import Selected, _bool, _by_task, _needs, _tasks
from entropic_bound.claims.verdict import INSUFFICIENT, Check, fmt

# ---------------------------------------------------------------- the trained structure


def deficiency(tables, run, s, inputs) -> Selected | Check:
    """Every registered (task, r < r*) cell: R̂*_c(r) ≥ factor·tail(r), the best-known bound
    against the Eckart–Young tail of the teacher's kernel; a missing bound is unknown."""
    from entropic_bound.bounds.stage import bound_ranks

    rung = inputs["rung"]
    bad = _needs(tables, "bounds")
    if bad is not None:
        return bad
    bounds = tables["bounds"]
    if not theory_v3.has_best_bounds(bounds):
        return Check(None, "bounds.csv has no best-known bound (column R_best)")
    b = run["bounds"]
    mode = b["ranks"] if rung in b["deficiency_rungs"] else "knee"
    best = theory_v3.best_bound(bounds)
    kappa, k = float(run["task"]["kappa"]), s["deficiency_factor"]
    cells = {}
    for t in _tasks(run, [rung]).itertuples(index=False):
        for r in bound_ranks(int(t.r_star), mode):
            ratio = best.get((t.task_id, r), np.nan) / theory_v3.tail(t.r_star, kappa, r)
            cells[f"{t.task_id}@r={r}"] = np.nan if np.isnan(ratio) else bool(ratio >= k)
    what = f"{rung}: R̂*_c(r) ≥ {fmt(k)}·tail(r) on (task, r < r*) cells"
    return Selected(what, pd.Series(cells, dtype="object"), "cells")


def _targets(tables, run, s, rung):
    tasks = _tasks(run, [rung])
    bounds, metrics = tables["bounds"], tables["train_metrics"]
    eps = theory_v3.audited_epsilon(bounds, tasks, s).set_index("task_id")["eps"]
    best = theory_v3.best_of_students(metrics)
    return tasks, eps, best


def achievability(tables, run, s, inputs) -> Selected | Check:
    """Every registered task: the best of (student seeds × restarts) at r = r* reaches the
    audited ε_task; a task without a student at r* or without a target is unknown."""
    bad = _needs(tables, "train_metrics", "bounds")
    if bad is not None or not theory_v3.has_best_bounds(tables["bounds"]):
        return bad or Check(None, "bounds.csv has no best-known bound (column R_best)")
    rung = inputs["rung"]
    tasks, eps, best = _targets(tables, run, s, rung)
    at = best[best["rank"] == best["r_star"]].set_index("task_id")["R_best_student"]
    R, target = tasks["task_id"].map(at), tasks["task_id"].map(eps)
    out = _bool(R <= target, R.isna() | target.isna())
    out.index = tasks["task_id"].to_numpy()
    return Selected(f"{rung}: best-of R(r*) ≤ ε_task (audited)", out)


def knee(tables, run, s, inputs) -> Selected | Check:
    """r_emp (the least rank whose best-of R reaches the audited ε_task) = r*; a task whose
    students never reach it is a miss, one without students or a target is unknown."""
    bad = _needs(tables, "train_metrics", "bounds")
    if bad is not None or not theory_v3.has_best_bounds(tables["bounds"]):
        return bad or Check(None, "bounds.csv has no best-known bound (column R_best)")
    rung = inputs["rung"]
    tasks, eps, best = _targets(tables, run, s, rung)
    found = tasks["task_id"].map(r_emp_v3(tables["train_metrics"], tables["bounds"], tasks, s))
    trained = tasks["task_id"].isin(best["task_id"])
    unknown = (~trained) | tasks["task_id"].map(eps).isna()
    out = _bool(found == tasks["r_star"], unknown)
    out.index = tasks["task_id"].to_numpy()
    return Selected(f"{rung}: r_emp (best of seeds × restarts, audited ε_task) = r*", out)


def recovery(tables, run, s, inputs) -> Selected | Check:
    """The v4 estimator on the learned full-rank kernels = r* on every student seed of the
    task; a task without a full-rank student, or with a NaN spectrum, is unknown."""
    bad = _needs(tables, "train_metrics") or theory.refusal_on_task_grid(s["estimator"], run, s)
    if bad is not None:
        return bad
    rung = inputs["rung"]
    tasks = _tasks(run, [rung])
    full = full_rank_students(tables["train_metrics"])
    full = full[full["rung"] == rung].reset_index(drop=True)
    per = pd.Series(dtype="object")
    if len(full):
        r_hat = estimate_finite(
            spectra_matrix(full["spectrum"]), s["estimator"], s["numerical_tol"]
        )
        hit = _bool(np.floor(r_hat + 0.5) == full["r_star"].to_numpy(), np.isnan(r_hat))
        # a task is recovered when every seed is: one known miss decides; else NaN is unknown
        per = theory_v3.combine(hit, full["task_id"])
    what = f"{rung} learned {pretty_estimator(s['estimator'])} = r* (every seed)"
    return Selected(what, _by_task(tasks, per))


# ---------------------------------------------------------------- the static predictor


def p_static_exact(tables, run, s, inputs) -> Selected | Check:
    """P_static (v4 estimator) = r* per registered task at noise σ (``negate``: ≠ r*); judged
    only at B ≥ budget_factor·n·d when ``budget``; a σ the run never made is missing input."""
    bad = _needs(tables, "data_only_predictions") or theory.refusal_on_task_grid(
        s["estimator"], run, s
    )
    if bad is not None:
        return bad
    sigma = float(inputs["sigma"])
    unmade = theory.sigma_not_made(run, sigma)
    if unmade is not None:
        return unmade
    if inputs.get("budget"):
        t = run["task"]
        need = s["budget_factor"] * t["n"] * t["d"]
        if t["n_train"] < need:
            text = f"not judged: B = {t['n_train']} < {s['budget_factor']}·n·d = {need}"
            return Check(None, text, INSUFFICIENT)
    tasks = _tasks(run, inputs["rungs"])
    hit = predicted_exact(tables["data_only_predictions"], s["estimator"], "P_static", sigma, tasks)
    rungs = ", ".join(inputs["rungs"])
    if inputs.get("negate"):
        hit = hit.map(lambda h: h if pd.isna(h) else not h).astype("object")
        return Selected(f"{rungs}, σ = {fmt(sigma)}: P_static ≠ r*", hit)
    return Selected(f"{rungs}, σ = {fmt(sigma)}: P_static = r*", hit)


def static_student_risk_floor(tables, run, s, inputs) -> Selected | Check:
    """The smaller static-student R (L0 or L1 at full rank) of every registered task of the
    rungs ≥ ``inputs['need']``; a task without a static student is unknown."""
    bad = _needs(tables, "train_metrics")
    if bad is not None:
        return bad
    tasks = _tasks(run, inputs["rungs"])
    st = static_student_risk(risk_curves(tables["train_metrics"])).set_index("task_id")
    R, need = tasks["task_id"].map(st["static_student_R"]), inputs["need"]
    out = _bool(R >= need, R.isna())
    out.index = tasks["task_id"].to_numpy()
    what = f"{', '.join(inputs['rungs'])}: static-student R ≥ {fmt(need)} (min {fmt(R.min())})"
    return Selected(what, out)


def static_match(tables, run, s, inputs) -> Selected | Check:
    """P_static = r_emp = r* per registered task of the rungs (a static kernel explains the
    data); unknown where either is missing."""
    bad = _needs(tables, "data_only_predictions", "train_metrics", "bounds")
    bad = bad or theory.refusal_on_task_grid(s["estimator"], run, s) or theory.sigma_not_made(run)
    if bad is not None:
        return bad
    if not theory_v3.has_best_bounds(tables["bounds"]):
        return Check(None, "bounds.csv has no best-known bound (column R_best)")
    tasks = _tasks(run, inputs["rungs"])
    p = predicted_exact(tables["data_only_predictions"], s["estimator"], "P_static", 0.0, tasks)
    parts = []
    for rung in inputs["rungs"]:
        k = knee(tables, run, s, {"rung": rung})
        if isinstance(k, Check):
            return k
        parts.append(k.outcome)
    knee_hit = pd.concat(parts) if parts else pd.Series(dtype="object")
    ids = tasks["task_id"].to_numpy()
    both = pd.concat([p.reindex(ids), knee_hit.reindex(ids)])  # a task's two outcomes
    out = theory_v3.combine(both, pd.Series(both.index)).reindex(ids)
    return Selected(f"{', '.join(inputs['rungs'])}: P_static = r_emp = r*", out)


def ladder(tables, run, s, inputs) -> Selected | Check:
    """Per registered ladder rung (L2, Lλ…, L4: λ from 0 to 1) the mean of ``column`` over its
    registered tasks; a rung with a missing or NaN value is unknown (NaN)."""
    from entropic_bound.core.rungs import ladder_lambda

    bad = _needs(tables, "data_only_predictions", "train_metrics") or theory.sigma_not_made(run)
    if bad is not None:
        return bad
    t = intrinsic_ranks(
        tables["data_only_predictions"], s["estimator"], tables["train_metrics"], s["epsilon"]
    )
    tasks = theory_v3.registered_tasks(run)
    tasks = tasks[tasks["rung"].map(ladder_lambda).notna()]
    col = inputs["column"]
    got = tasks["task_id"].map(t.drop_duplicates("task_id").set_index("task_id")[col])
    lam = tasks["rung"].map(ladder_lambda).to_numpy()
    per = (
        pd.Series(got.to_numpy(), index=lam)
        .groupby(level=0)
        .agg(lambda x: x.mean() if x.notna().all() else np.nan)
    )
    sel = Selected(f"ladder: {col} against λ", per.astype(float), "rungs")
    sel.scores = {"x": list(per.index), "y": list(per.to_numpy())}
    missing = list(tasks["task_id"][got.isna().to_numpy()])
    if missing:  # the registered tasks behind an unknown rung, by name
        more = " …" if len(missing) > 4 else ""
        sel.note = f"; tasks without a value: {', '.join(missing[:4])}{more}"
    return sel
