"""C5, the naive transfer fails: P_static on attention, and the static students' risk. (docs/method.md §5)

The statement is the abstract's sentence; the test's thresholds come from config/claims.yaml.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from entropic_bound.analysis import (
    predictions_of,
    risk_curves,
    static_student_risk,
)
from entropic_bound.claims import theory
from entropic_bound.claims.checks import (
    absent_rungs,
)
from entropic_bound.claims.verdict import Check, claim, fmt, nan_note

#: the abstract's sentence this claim tests
STATEMENT = "A naive transfer [to real attention] fails"


def _t_c5(claims: dict) -> str:
    c = claims["C5"]
    return (
        f"on {', '.join(c['rungs'])}: P_static ≠ r* on ≥ {c['min_mismatch_rate']:.0%} of "
        f"tasks and static-student R ≥ {fmt(c['min_static_student_risk'])} on every task"
    )


@claim("C5", STATEMENT, needs=("data_only_predictions", "train_metrics"), threshold=_t_c5)
def claim_c5(tables: Mapping, claims: dict) -> list[Check]:
    """On L3, L4: P_static ≠ r* for ≥ min_mismatch_rate of tasks and static-student R ≥ min on
    every task of those rungs (a task without a static student is missing, not a pass)."""
    c, est = claims["C5"], claims["estimator"]
    p = predictions_of(tables["data_only_predictions"], est, "P_static", 0.0)
    p = p[p["class"].isin(c["rungs"])]
    where = absent_rungs(p["class"], c["rungs"])
    if p.empty:
        mismatch = Check(None, f"no P_static rows on {', '.join(c['rungs'])}")
    else:
        miss = p["r_round"] != p["r_star"]  # a NaN estimate is no match, so a mismatch
        rate = float(miss.mean())
        mismatch = Check(
            bool(rate >= c["min_mismatch_rate"]),
            f"P_static ≠ r* on {int(miss.sum())}/{len(p)} = {rate:.2f} of tasks{where}",
            headline=("P_static ≠ r* rate", rate, ">=", c["min_mismatch_rate"], len(p)),
        )
    static = static_student_risk(risk_curves(tables["train_metrics"]))
    static = static[static["rung"].isin(c["rungs"])]
    r = static["static_student_R"]
    # every task the predictions list on these rungs needs its static students
    lacking = sorted(set(p["task_id"]) - set(static["task_id"]))
    if static.empty:
        risk = Check(None, "no static student on these rungs")
    else:
        ok = bool((r >= c["min_static_student_risk"]).all())  # a NaN R fails
        text = (
            f"static-student R min {fmt(r.min())}, median {fmt(r.median())} over "
            f"{r.notna().sum()} tasks" + nan_note(r, "static-student R")
        )
        if lacking:
            text += f"; absent from train_metrics: {len(lacking)} task(s) ({', '.join(lacking)})"
        risk = Check(None if ok and lacking else ok, text)
    return [mismatch, risk]


#: the registered claim (claims/registry.py lists them in order)
CLAIM = claim_c5


# ---------------------------------------------------------------- registration v2


def _t_c5_v2(v2: dict) -> str:
    c = v2["C5"]
    return (
        f"on {', '.join(c['rungs'])}: P_static ≠ r* on ≥ {c['min_mismatch_rate']:.0%} of tasks and "
        f"static-student R ≥ {fmt(c['min_static_student_risk'])} on every task"
    )


@claim("C5", STATEMENT, ("data_only_predictions", "train_metrics"), _t_c5_v2, registration="v2")
def claim_c5_v2(tables: Mapping, v2: dict, run: dict | None) -> list[Check]:
    """P_static (v2 estimator) misses r* on the attention rungs and the static students' R stays
    high; NaN counts against the claim; each rate over ≥ min_cases tasks."""
    c, est = v2["C5"], v2["estimator"]
    bad = theory.refusal_on_task_grid(est, run, v2)
    if bad is not None:
        return [bad]
    p = predictions_of(tables["data_only_predictions"], est, "P_static", 0.0)
    p = p[p["class"].isin(c["rungs"])]
    miss = theory.counted(
        (p["r_round"] != p["r_star"]) & p["r_round"].notna(),
        c["min_mismatch_rate"],
        v2,
        "P_static ≠ r*",
        "P_static mismatch rate",
    )
    miss = theory.sigma_not_made(run) or miss
    st = static_student_risk(risk_curves(tables["train_metrics"]))
    st = st[st["rung"].isin(c["rungs"])]
    high = theory.counted(
        st["static_student_R"] >= c["min_static_student_risk"],
        1.0,
        v2,
        f"static-student R ≥ {fmt(c['min_static_student_risk'])} (min {fmt(st['static_student_R'].min())})",
        "static-student R ≥ floor (share of tasks)",
    )
    return [miss, high]


CLAIM_V2 = claim_c5_v2


# ---------------------------------------------------------------- registration v3


def _t_c5_v3(v3: dict) -> str:
    c = v3["C5"]
    return (
        f"on {', '.join(c['rungs'])}: P_static ≠ r* on ≥ {c['min_mismatch_rate']:.0%} of tasks, "
        f"static-student R ≥ {fmt(c['min_static_student_risk'])} on every task"
    )


@claim("C5", STATEMENT, ("data_only_predictions", "train_metrics"), _t_c5_v3, registration="v3")
def claim_c5_v3(tables: Mapping, v3: dict, run: dict | None) -> list[Check]:
    """The naive transfer fails on the registered attention tasks: a NaN estimate is not a
    mismatch, a NaN or absent static student fails (docs/method.md §5c)."""
    from entropic_bound.claims import checks_v3, theory_v3

    c, est = v3["C5"], v3["estimator"]
    names = ("C5 P_static misses r* (L3, L4)", "C5 static students stay high (L3, L4)")
    bad = theory_v3.estimator_refusal(run, est, v3, names[0])
    if bad is not None:
        return [bad]
    tasks = theory_v3.registered_tasks(run, c["rungs"])
    exact = checks_v3.predicted_exact(tables["data_only_predictions"], est, "P_static", 0.0, tasks)
    # a NaN estimate is not a mismatch: the mismatch is NaN there, which counts against the claim
    hit = exact.astype("boolean")
    mismatch = (~hit).astype("object").where(hit.notna(), np.nan)
    miss = theory_v3.rate_check(
        names[0],
        mismatch,
        c["min_mismatch_rate"],
        v3,
        "P_static ≠ r*",
        "P_static mismatch rate",
    )
    miss = theory.sigma_not_made(run, 0.0, names[0]) or miss
    st = static_student_risk(risk_curves(tables["train_metrics"])).set_index("task_id")
    R = tasks["task_id"].map(st["static_student_R"])
    floor = c["min_static_student_risk"]
    ok = pd.Series(np.where(R.isna(), np.nan, R >= floor), index=tasks["task_id"].to_numpy())
    high = theory_v3.universal_check(
        names[1],
        ok.astype("object"),
        f"static-student R ≥ {fmt(floor)} (min {fmt(R.min())})",
        ("min static-student R", float(R.min()), ">=", floor, len(R)),
    )
    return [miss, high]


CLAIM_V3 = claim_c5_v3
