"""What each of registration v4's sub-claims reads (docs/method.md §5d): one function per
``select:`` name of config/claims.yaml, from the cached tables and the run's config to the
per-unit outcomes (True, False or NaN: unknown) or the per-estimator scores a primitive decides.

A selector expects the units the run's config registers, not the rows the tables happen to
hold: a registered unit without a row is NaN (unknown), and so is one that a join could not
match; it never drops a unit silently. Each returns a :class:`Selected`, or a :class:`Check`
when the sub-claim cannot be posed at all on this run (ill-posed, the run's config absent).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

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
from entropic_bound.claims.verdict import ILL_POSED, INSUFFICIENT, Check, fmt


@dataclass
class Selected:
    """Per-unit outcomes (``outcome``: True/False/NaN indexed by unit) or per-estimator scores
    (``scores``), with the words that describe them and, for a rate, the number of independent
    units behind them."""

    what: str
    outcome: pd.Series | None = None
    unit: str = "tasks"
    independent: int | None = None
    scores: dict = field(default_factory=dict)
    n: int = 0
    note: str = ""
    power: tuple[bool, str] | None = None


def _needs(tables: Mapping, *names: str) -> Check | None:
    """Missing input when a table the line reads is absent or has no rows (named by file)."""
    from entropic_bound.claims.verdict import TABLE_FILES

    absent = [TABLE_FILES[t] for t in names if tables.get(t) is None]
    empty = [TABLE_FILES[t] for t in names if tables.get(t) is not None and not len(tables[t])]
    parts = (["absent: " + ", ".join(absent)] if absent else []) + (
        ["empty (0 rows): " + ", ".join(empty)] if empty else []
    )
    return Check(None, "; ".join(parts)) if parts else None


def _tasks(run: dict | None, rungs) -> pd.DataFrame:
    return theory_v3.registered_tasks(run, rungs)


def _by_task(tasks: pd.DataFrame, values: pd.Series) -> pd.Series:
    out = pd.Series(tasks["task_id"].map(values).to_numpy(), index=tasks["task_id"].to_numpy())
    return out.astype("object").where(out.notna(), np.nan)


def _bool(cond, unknown) -> pd.Series:
    c = pd.Series(cond).reset_index(drop=True)
    u = pd.Series(unknown).reset_index(drop=True).astype(bool)
    return pd.Series(np.where(u, np.nan, c.astype(bool)), dtype="object")


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
        g = pd.DataFrame({"task": full["task_id"], "hit": hit})
        # a task is recovered when every seed is: one known miss decides; else any NaN is unknown
        per = g.groupby("task")["hit"].agg(
            lambda h: False if (h == False).any() else (np.nan if h.isna().any() else True)  # noqa: E712
        )
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
    p_hit = p.reindex(tasks["task_id"])
    k_hit = knee_hit.reindex(tasks["task_id"])
    out = pd.Series(
        [_and(a, b) for a, b in zip(p_hit, k_hit)],
        index=tasks["task_id"].to_numpy(),
        dtype="object",
    )
    return Selected(f"{', '.join(inputs['rungs'])}: P_static = r_emp = r*", out)


def _and(a, b):
    """Three-valued and: a known False decides; otherwise NaN is unknown."""
    if a is False or b is False or (not pd.isna(a) and not a) or (not pd.isna(b) and not b):
        return False
    if pd.isna(a) or pd.isna(b):
        return np.nan
    return True


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


# ---------------------------------------------------------------- C8: distorted learned kernels


def _distortion(tables, run, s) -> dict | Check:
    """Matched learned kernels of C8's distortion grid: every estimator on every L4 kernel
    (teacher, student seed, β) and on its teacher's L3 kernel (same seed); unmatched L4 kernels
    are kept, with NaN on the L3 side. Estimators admitted two-sided: the signal side on the
    task grid's true spectra (theory.admission), the floor side exact on ≥ admission_rate of
    the matched L3 kernels. The claims estimator not admitted: ill-posed."""
    c = s["C8"]
    bad = _needs(tables, "C8_distortion")
    if bad is not None:
        return bad
    if run is None:
        return Check(None, "the run's config is needed for the estimators' admission")
    df = tables["C8_distortion"]
    names = [c["estimator"], *c["competitors"]]
    S = spectra_matrix(df["spectrum"])
    est = {e: estimate_finite(S, e, s["numerical_tol"]) for e in names}
    key = ["teacher", "seed"]
    base = df[key + ["rung", "beta", "r_star"]].reset_index(drop=True)
    for e in names:
        base[e] = est[e]
    l4 = base[base["rung"] == "L4"]
    l3 = base[base["rung"] == "L3"].drop_duplicates(key)
    m = l4.merge(l3[key + names], on=key, how="left", suffixes=("", "_l3"), indicator=True)
    unmatched = m[m["_merge"] == "left_only"]
    want = [spec for spec in theory_v3.registered_tasks(run, ["L4"])["task_id"]]
    missing = sorted(set(want) - set(l4["teacher"]))
    t = run["task"]
    admitted, notes = [], []
    for e in names:
        ill = theory.admission(e, t["r_star"], t["kappa"], s["estimator_margin"], "task")
        l3_rate = _exact(m[f"{e}_l3"], m["r_star"]).mean() if len(m) else np.nan
        ok_floor = bool(np.isfinite(l3_rate) and l3_rate >= c["admission_rate"] - s["float_slack"])
        if ill is None and ok_floor:
            admitted.append(e)
        else:
            why = ill.measured if ill is not None else f"exact on {fmt(l3_rate)} of matched L3"
            notes.append(f"{pretty_estimator(e)} not admitted ({why})")
    if c["estimator"] not in admitted:
        return Check(None, "; ".join(notes), ILL_POSED)
    extra = ""
    if len(unmatched):
        extra += f"; {len(unmatched)} L4 kernels without their L3 kernel: "
        extra += ", ".join(f"{r.teacher}/seed {r.seed}" for r in unmatched.head(4).itertuples())
    if missing:
        extra += f"; registered teachers without L4 kernels: {', '.join(missing[:4])}"
    return {
        "m": m,
        "admitted": admitted,
        "notes": "; ".join(notes),
        "extra": extra,
        "teachers": int(m["teacher"].nunique()),
        "missing": missing,
    }


def _exact(r_hat, r_star) -> pd.Series:
    r_hat = pd.Series(np.asarray(r_hat, dtype=float))
    hit = np.floor(r_hat + 0.5) == np.asarray(r_star, dtype=float)
    return pd.Series(np.where(r_hat.isna(), np.nan, hit), dtype=float)


def _power(d: dict, s) -> tuple[bool, str]:
    from entropic_bound.claims.v4.primitives import power

    m, c = d["m"], s["C8"]
    drops = {}
    for e in d["admitted"]:
        if e == c["estimator"]:
            continue
        drops[pretty_estimator(e)] = float(
            _exact(m[f"{e}_l3"], m["r_star"]).mean() - _exact(m[e], m["r_star"]).mean()
        )
    return power(drops, c["power_drop"], "distortion")


def distortion_exact(tables, run, s, inputs) -> Selected | Check:
    """The claims estimator exact on the matched learned L4 kernels (every β, seed, teacher);
    a NaN estimate, and a registered teacher without kernels, are unknown."""
    d = _distortion(tables, run, s)
    if isinstance(d, Check):
        return d
    e, m = s["C8"]["estimator"], d["m"]
    hit = _exact(m[e], m["r_star"])
    out = pd.Series(hit.astype("object").where(hit.notna(), np.nan).to_numpy())
    out.index = [f"{t}/s{sd}/β{fmt(b)}" for t, sd, b in zip(m["teacher"], m["seed"], m["beta"])]
    for t in d["missing"]:
        out[f"{t} (no kernels)"] = np.nan
    what = f"learned L4 kernels (distortion grid): {pretty_estimator(e)} = r*"
    sel = Selected(what, out.astype("object"), "kernels", independent=d["teachers"])
    sel.note = d["extra"]
    return sel


def _paired(tables, run, s, score: Callable, higher: bool, what: str) -> Selected | Check:
    d = _distortion(tables, run, s)
    if isinstance(d, Check):
        return d
    m = d["m"]
    scores = {e: score(m, e) for e in d["admitted"]}
    sel = Selected(what, None, "kernels", independent=d["teachers"], scores=scores, n=len(m))
    sel.note = (f"; {d['notes']}" if d["notes"] else "") + d["extra"]
    if len(d["missing"]):  # a registered teacher without kernels: every score is unknown
        sel.scores = {e: np.nan for e in scores}
    sel.power = _power(d, s)
    return sel


def distortion_rate(tables, run, s, inputs):
    """Per admitted estimator, its exact rate on the matched learned L4 kernels (higher is
    better; a NaN estimate makes the rate unknown)."""

    def score(m, e):
        hit = _exact(m[e], m["r_star"])
        return float(hit.mean()) if hit.notna().all() else np.nan

    return _paired(tables, run, s, score, True, "L4 exact rate")


def distortion_shift(tables, run, s, inputs):
    """Per admitted estimator, the mean unsigned shift |r̂_L4 − r̂_L3| between each L4 kernel
    and its teacher's L3 kernel (lower is better; an unmatched or NaN pair makes it unknown)."""

    def score(m, e):
        shift = (m[e] - m[f"{e}_l3"]).abs()
        return float(shift.mean()) if shift.notna().all() else np.nan

    return _paired(tables, run, s, score, False, "mean |r̂_L4 − r̂_L3|")


# ---------------------------------------------------------------- C9: the data-only frontier


def _frontier(tables, run, s) -> Check | None:
    bad = _needs(tables, "frontier")
    if bad is not None:
        return bad
    if run is None:
        return Check(None, "the run's config is needed for the estimator's admission")
    fr = run["frontier"]
    return theory.admission(
        s["C9"]["estimator"], fr["r_star"], fr["kappa"], s["estimator_margin"], "frontier"
    )


def _per_teacher(rows: pd.DataFrame) -> pd.Series:
    """A teacher is exact when every one of its cells is: one known miss decides; else a NaN
    cell leaves it unknown."""
    if rows.empty:
        return pd.Series(dtype="object")
    units = theory_v3.units_of(rows)
    return (
        rows["hit"]
        .groupby(units.to_numpy())
        .agg(
            lambda h: False if (h == False).any() else (np.nan if h.isna().any() else True)  # noqa: E712
        )
        .astype("object")
    )


def _registered_teachers(run, value_map: str) -> list[str]:
    fr = run["frontier"]
    return [f"{value_map}/{r}/{sd}" for r in fr["r_star"] for sd in fr["seeds"]]


def linear_clean(tables, run, s, inputs) -> Selected | Check:
    """P_attn on L3, value unknown, σ = 0, every n ≥ d: exact on every teacher (a theorem:
    col(C) = col(A) whatever V is)."""
    bad = _frontier(tables, run, s)
    if bad is not None:
        return bad
    f = tables["frontier"]
    a = theory_v3.frontier_rows(f, s["C9"]["estimator"], predictor="P_attn", value_map="unknown")
    a = a[(a["class"] == "L3") & (a["sigma"] == 0) & (a["n"] >= a["d"])]
    per = _per_teacher(a).reindex(_registered_teachers(run, "unknown"))
    return Selected("L3 P_attn (value unknown), σ = 0, every n ≥ d", per, "teachers")


def linear_at_scale(tables, run, s, inputs) -> Selected | Check:
    """P_attn on L3, value unknown: exact on every teacher at every n ≥ scale·d and every
    0 < σ/std ≤ the bound (std: the clean output's, g·sqrt(1 + (d + 1)/n))."""
    bad = _frontier(tables, run, s)
    if bad is not None:
        return bad
    c = s["C9"]
    f = tables["frontier"]
    a = theory_v3.frontier_rows(f, c["estimator"], predictor="P_attn", value_map="unknown")
    a = a[a["class"] == "L3"]
    rel = a["sigma"] / (run["frontier"]["gain"] * np.sqrt(1 + (a["d"] + 1) / a["n"]))
    a = a[
        (a["n"] >= c["scale_factor"] * a["d"])
        & (a["sigma"] > 0)
        & (rel <= c["max_relative_sigma_at_scale"] + s["float_slack"])
    ]
    if a.empty:
        return Check(None, f"no L3 cell with n ≥ {fmt(c['scale_factor'])}·d and 0 < σ/std ≤ bound")
    per = _per_teacher(a).reindex(_registered_teachers(run, "unknown"))
    what = (
        f"L3 P_attn (value unknown) exact at every n ≥ {fmt(c['scale_factor'])}·d, "
        f"0 < σ/std ≤ {fmt(c['max_relative_sigma_at_scale'])}"
    )
    return Selected(what, per, "teachers")


def softmax_partial(tables, run, s, inputs) -> Selected | Check:
    """Per teacher (value unknown), over its matched cells (σ = 0, n > d, every β): 0 < L4's
    exact rate < L3's. An L4 cell without its L3 cell, or a NaN estimate, leaves the teacher
    unknown unless the other cells already decide it."""
    bad = _frontier(tables, run, s)
    if bad is not None:
        return bad
    f = tables["frontier"]
    rows = lambda cls: theory_v3.frontier_rows(  # noqa: E731
        f, s["C9"]["estimator"], predictor="P_attn", value_map="unknown"
    ).query("`class` == @cls and sigma == 0 and n > d")
    key = ["value_map", "n", "r_star", "seed"]
    l4, l3 = rows("L4"), rows("L3")
    m = l4.merge(l3[key + ["hit"]], on=key, how="left", suffixes=("", "_l3"))
    out = {}
    for unit, g in m.groupby(theory_v3.units_of(m).to_numpy()) if len(m) else []:
        h4, h3 = g["hit"].astype(float), g["hit_l3"].astype(float)
        if h4.isna().any() or h3.isna().any():
            out[unit] = np.nan
        else:
            r4, r3 = h4.mean(), h3.mean()
            out[unit] = bool(0 < r4 < r3)
    per = pd.Series(out, dtype="object").reindex(_registered_teachers(run, "unknown"))
    return Selected("per teacher, 0 < L4 exact rate < matched L3's (σ = 0, n > d)", per, "teachers")


def nonlinear_inversion(tables, run, s, inputs) -> Selected | Check:
    """Per teacher (value known; n < d, or n = d for the line beyond the abstract): the median
    over its β cells of σ_exact(linear twin) / σ_exact(P_invert) ≥ min_tolerance_ratio. A
    teacher that P_invert does not recover at σ = 0 is unknown; 0/0 and ∞/∞ (the grid does not
    separate them) are misses."""
    bad = _needs(tables, "X1_teachers")
    if bad is not None:
        return bad
    x = tables["X1_teachers"]
    x = x[x["n"] < x["d"]] if inputs["n"] == "below_d" else x[x["n"] == x["d"]]
    if x.empty:
        return Check(
            None, f"no X1_teachers cell with n {'<' if inputs['n'] == 'below_d' else '='} d"
        )
    key = ["value_map", "r_star", "seed", "n", "d", "beta", "n_seqs"]
    inv = x[x["predictor"] == "P_invert"].set_index(key)["sigma_exact_rel"]
    twin = x[x["predictor"] == "P_invert_linear"].set_index(key)["sigma_exact_rel"]
    both = pd.concat([inv.rename("inv"), twin.rename("twin")], axis=1)  # outer: none dropped
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = both["twin"] / both["inv"]
    unknown = both["inv"].isna() | both["twin"].isna()
    ratio = ratio.where(~unknown)
    ratio = ratio.fillna(0.0).where(~unknown)  # 0/0, ∞/∞: the grid does not separate: a miss
    r = ratio.rename("ratio").reset_index()
    units = r[["value_map", "r_star", "seed"]].astype(str).agg("/".join, axis=1)
    need = s["C9"]["min_tolerance_ratio"]
    med = (
        r["ratio"].groupby(units.to_numpy()).agg(lambda v: np.nan if v.isna().any() else v.median())
    )
    out = med.map(lambda v: np.nan if pd.isna(v) else bool(v >= need)).astype("object")
    where = "n < d" if inputs["n"] == "below_d" else "n = d"
    what = f"{where}: σ_exact(linear twin)/σ_exact(P_invert) ≥ {fmt(need)} (median over β)"
    return Selected(what, out, "teachers")


def identifiability(tables, run, s, inputs) -> Selected | Check:
    """P_invert assuming V = I on value-unknown data, σ = 0, n < d: exact kernels (each cell's
    clean rate × its cases)."""
    bad = _needs(tables, "X1_boundaries")
    if bad is not None:
        return bad
    x1 = tables["X1_boundaries"]
    ident = x1[(x1["predictor"] == "P_invert_V=I") & (x1["n"] < x1["d"])]
    if "frontier_budget" in ident:
        ident = ident[ident["frontier_budget"].astype(bool)]
    hits = np.rint(ident["rate_clean"] * ident["n_cases"])
    total = int(ident["n_cases"].sum())
    k = int(hits.sum()) if hits.notna().all() else None
    if k is None:
        return Check(None, "P_invert(V = I): a cell's clean rate is NaN")
    out = pd.Series([True] * k + [False] * (total - k), dtype="object")
    cases = ident["n_cases"].max() if len(ident) else 0
    return Selected(
        "P_invert assuming V = I, value unknown, n < d, σ = 0: exact",
        out,
        "kernels",
        independent=int(cases),
    )


# ---------------------------------------------------------------- the frozen v3 readings


def v3_checks(tables, run, claims, inputs) -> list[Check]:
    """Registration v3's checks of a claim, run as registered (for a line beyond the
    abstract): the whole claim, or the one check ``inputs['check']`` names."""
    from entropic_bound.claims.registry import CLAIMS_V3

    row_checks = CLAIMS_V3[inputs["claim"]].evaluate(tables, claims, run)
    if "check" in inputs:
        row_checks = [c for c in row_checks if c.name == inputs["check"]] or [
            Check(None, f"v3 has no check named {inputs['check']!r} on this run")
        ]
    return row_checks


#: select name -> the cached tables it reads (a planted control re-evaluates a line only when
#: one of them changed)
NEEDS: dict[str, tuple[str, ...]] = {
    "deficiency": ("bounds",),
    "achievability": ("train_metrics", "bounds"),
    "knee": ("train_metrics", "bounds"),
    "recovery": ("train_metrics",),
    "p_static_exact": ("data_only_predictions",),
    "static_student_risk": ("train_metrics",),
    "static_match": ("data_only_predictions", "train_metrics", "bounds"),
    "ladder": ("data_only_predictions", "train_metrics"),
    "distortion_exact": ("C8_distortion",),
    "distortion_rate": ("C8_distortion",),
    "distortion_shift": ("C8_distortion",),
    "linear_clean": ("frontier",),
    "linear_at_scale": ("frontier",),
    "softmax_partial": ("frontier",),
    "nonlinear_inversion": ("X1_teachers",),
    "identifiability": ("X1_boundaries",),
}

#: select name -> function(tables, run, v4 settings, inputs)
SELECTORS: dict[str, Callable] = {
    "deficiency": deficiency,
    "achievability": achievability,
    "knee": knee,
    "recovery": recovery,
    "p_static_exact": p_static_exact,
    "static_student_risk": static_student_risk_floor,
    "static_match": static_match,
    "ladder": ladder,
    "distortion_exact": distortion_exact,
    "distortion_rate": distortion_rate,
    "distortion_shift": distortion_shift,
    "linear_clean": linear_clean,
    "linear_at_scale": linear_at_scale,
    "softmax_partial": softmax_partial,
    "nonlinear_inversion": nonlinear_inversion,
    "identifiability": identifiability,
}
