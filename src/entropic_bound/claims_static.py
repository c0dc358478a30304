"""Claims C1–C5 (SCIENCE.md §5): the Entropic Bound for a static kernel (deficiency,
achievability, recovery), r* from data before training, and the naive transfer to attention.

Each is registered in :data:`.claims_base.CLAIMS` by :func:`.claims_base.claim`.
"""

from __future__ import annotations

from collections.abc import Mapping

from .analysis import (
    exact_summary,
    predictions_of,
    pretty_estimator,
    risk_curves,
    static_student_risk,
)
from .claims_base import (
    Check,
    _absent_rungs,
    _achievability,
    _deficiency,
    _g,
    _nan_note,
    _rate,
    _recovery,
    _sparse_note,
    claim,
)

# ---------------------------------------------------------------- C1–C9


def _t_c1(claims: dict) -> str:
    return f"L0: R(r) ≥ {_g(claims['C1']['min_ratio_to_theory'])}·R*(r) for every r < r*"


@claim("C1", needs=("train_metrics",), threshold=_t_c1)
def claim_c1(tables: Mapping, claims: dict) -> list[Check]:
    """L0: every r < r* has median R ≥ min_ratio·R*(r); the empirical/theory ratio per r."""
    k = claims["C1"]["min_ratio_to_theory"]
    d = _deficiency(risk_curves(tables["train_metrics"]), "L0")
    if d.empty:
        return [Check(None, "no L0 student below r* (L0 absent, or r* = 1 only)")]
    per_r = d.groupby("rank")["ratio"].min()
    ok = int((d["ratio"] >= k).sum())
    text = (
        f"R/R* ≥ {_g(k)} on {ok}/{len(d)} (task, r < r*) cells; min ratio {_g(d['ratio'].min())}, "
        f"median {_g(d['ratio'].median())}; min ratio per r: "
        + ", ".join(f"r={int(r)}: {_g(v)}" for r, v in per_r.items())
        + _nan_note(d["R"], "R")
        + _sparse_note(d, risk_curves(tables["train_metrics"]), "L0")
    )
    return [Check(bool(ok == len(d)), text)]


def _t_c2(claims: dict) -> str:
    return f"L0: R(r*) ≤ {_g(claims['C2']['max_risk'])} on every task"


@claim("C2", needs=("train_metrics",), threshold=_t_c2)
def claim_c2(tables: Mapping, claims: dict) -> list[Check]:
    """L0: median R at r = r* ≤ max_risk on every task."""
    curves = risk_curves(tables["train_metrics"])
    return [_achievability(curves, "L0", claims["C2"]["max_risk"])]


def _t_c3(claims: dict) -> str:
    return (
        f"L0 full-rank student: {pretty_estimator(claims['estimator'])}(learned) = r* on "
        f"≥ {claims['C3']['min_exact_rate']:.0%} of tasks×seeds"
    )


@claim("C3", needs=("train_metrics",), threshold=_t_c3)
def claim_c3(tables: Mapping, claims: dict) -> list[Check]:
    """L0 full-rank student: estimator(learned kernel) = r* for ≥ min_exact_rate of tasks × seeds."""
    return [_recovery(tables["train_metrics"], "L0", claims)]


def _t_c4(claims: dict) -> str:
    c = claims["C4"]
    return (
        f"P_static on L0 = r* on ≥ {c['min_exact_rate_clean']:.0%} at σ = 0 and "
        f"≥ {c['min_exact_rate_noisy']:.0%} at σ = {_g(c['noisy_sigma'])}"
    )


@claim("C4", needs=("data_only_predictions",), threshold=_t_c4)
def claim_c4(tables: Mapping, claims: dict) -> list[Check]:
    """P_static on L0: exact on all clean tasks and on ≥ min_exact_rate_noisy of noisy copies."""
    c, est, slack = claims["C4"], claims["estimator"], claims["float_slack"]
    checks = []
    for sigma, need in (
        (0.0, c["min_exact_rate_clean"]),
        (c["noisy_sigma"], c["min_exact_rate_noisy"]),
    ):
        p = predictions_of(tables["data_only_predictions"], est, "P_static", sigma)
        p = p[p["class"] == "L0"]
        s = exact_summary(p["r_hat"], p["r_star"])
        checks.append(
            Check(
                None if s["n"] == 0 else bool(s["exact_rate"] >= need - slack),
                f"σ = {_g(sigma)}: {_rate(s)}",
            )
        )
    return checks


def _t_c5(claims: dict) -> str:
    c = claims["C5"]
    return (
        f"on {', '.join(c['rungs'])}: P_static ≠ r* on ≥ {c['min_mismatch_rate']:.0%} of "
        f"tasks and static-student R ≥ {_g(c['min_static_student_risk'])} on every task"
    )


@claim("C5", needs=("data_only_predictions", "train_metrics"), threshold=_t_c5)
def claim_c5(tables: Mapping, claims: dict) -> list[Check]:
    """On L3, L4: P_static ≠ r* for ≥ min_mismatch_rate of tasks and static-student R ≥ min on
    every task of those rungs (a task without a static student is missing, not a pass)."""
    c, est = claims["C5"], claims["estimator"]
    p = predictions_of(tables["data_only_predictions"], est, "P_static", 0.0)
    p = p[p["class"].isin(c["rungs"])]
    where = _absent_rungs(p["class"], c["rungs"])
    if p.empty:
        mismatch = Check(None, f"no P_static rows on {', '.join(c['rungs'])}")
    else:
        miss = p["r_round"] != p["r_star"]  # a NaN estimate is no match, so a mismatch
        rate = float(miss.mean())
        mismatch = Check(
            bool(rate >= c["min_mismatch_rate"]),
            f"P_static ≠ r* on {int(miss.sum())}/{len(p)} = {rate:.2f} of tasks{where}",
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
            f"static-student R min {_g(r.min())}, median {_g(r.median())} over "
            f"{r.notna().sum()} tasks" + _nan_note(r, "static-student R")
        )
        if lacking:
            text += f"; absent from train_metrics: {len(lacking)} task(s) ({', '.join(lacking)})"
        risk = Check(None if ok and lacking else ok, text)
    return [mismatch, risk]
