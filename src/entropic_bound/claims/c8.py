"""C8, the energy effective rank is the estimator robust to softmax distortion. (docs/method.md §5)

The statement is the abstract's sentence; the test's thresholds come from config/claims.yaml.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from entropic_bound.analysis import (
    estimate_finite,
    exact_summary,
    full_rank_students,
    pretty_estimator,
    spectra_matrix,
)
from entropic_bound.claims import theory
from entropic_bound.claims.verdict import INSUFFICIENT, Check, claim, fmt
from entropic_bound.core.estimators import energy_tau, estimate
from entropic_bound.core.rungs import is_softmax

#: the abstract's sentence this claim tests
STATEMENT = "the energy effective rank [is] the estimator robust to softmax distortion"


def _t_c8(claims: dict) -> str:
    c = claims["C8"]
    return (
        f"{c['rung']} learned full-rank kernels: no estimator with smaller mean |err| than "
        f"{pretty_estimator(claims['estimator'])}, which is exact on ≥ {c['min_exact_rate']:.0%}"
    )


@claim("C8", STATEMENT, needs=("train_metrics",), threshold=_t_c8)
def claim_c8(tables: Mapping, claims: dict) -> list[Check]:
    """Learned full-rank kernels of the softmax rung: no estimator of C8's list (claims.yaml,
    not the run config) has a smaller mean |error| than the claims estimator, which is exact
    on ≥ min_exact_rate."""
    c, est = claims["C8"], claims["estimator"]
    names = list(dict.fromkeys([*c["estimators"], est]))
    full = full_rank_students(tables["train_metrics"])
    full = full[full["rung"] == c["rung"]]
    if full.empty:
        return [Check(None, f"no full-rank {c['rung']} student")]
    S = spectra_matrix(full["spectrum"])
    summ = {
        e: exact_summary(estimate_finite(S, e, tol=claims["numerical_tol"]), full["r_star"])
        for e in names
    }
    ours = summ[est]
    others = {e: s for e, s in summ.items() if e != est}
    tie = c["tie_tolerance"]
    beaten = [
        e
        for e, s in others.items()
        if not np.isfinite(ours["mean_abs_error"])
        or s["mean_abs_error"] < ours["mean_abs_error"] - tie
    ]
    text = f"{pretty_estimator(est)} mean |err| {fmt(ours['mean_abs_error'])}"
    if others:
        best = min(others, key=lambda e: others[e]["mean_abs_error"])
        text += f"; best other {pretty_estimator(best)} {fmt(others[best]['mean_abs_error'])}"
    if beaten:
        text += f"; smaller: {', '.join(pretty_estimator(e) for e in beaten)}"
    return [
        Check(not beaten, text),
        Check(
            headline=(
                f"{pretty_estimator(est)} exact rate on learned {c['rung']}",
                ours["exact_rate"],
                ">=",
                c["min_exact_rate"],
                ours["n"],
            ),
            passed=bool(ours["exact_rate"] >= c["min_exact_rate"]),
            measured=f"{pretty_estimator(est)} exact {ours['exact']}/{ours['n']} = {ours['exact_rate']:.2f}",
        ),
    ]


#: the registered claim (claims/registry.py lists them in order)
CLAIM = claim_c8


# ---------------------------------------------------------------- registration v2


def _t_c8_v2(v2: dict) -> str:
    return (
        "where softmax distorts the spectrum (data-only P_attn kernels of L4 at σ = 0 over β; the "
        "learned full-rank kernels of the softmax ladder rungs): the best admitted r_E(τ) has a "
        "smaller mean |err| than every other estimator (a tie is not a win)"
    )


@claim("C8", STATEMENT, ("frontier", "train_metrics"), _t_c8_v2, registration="v2")
def claim_c8_v2(tables: Mapping, v2: dict, run: dict | None) -> list[Check]:
    """Rank the estimators on the two data sets where softmax distorts; on each, the best
    admitted energy rank must beat every non-energy estimator by more than the tie tolerance.
    A data set on which every estimator is exact carries no evidence (insufficient data)."""
    c = v2["C8"]
    if run is None:
        return [Check(None, "the run's config is needed for the estimators' admission")]
    f = tables["frontier"]
    f = f[(f["class"] == c["data_only_class"]) & (f["predictor"] == "P_attn") & (f["sigma"] == 0)]
    errors_do = {
        e: (g["r_hat"] - g["r_star"]).abs()
        for e, g in f.groupby("estimator")
        if e in c["estimators"]
    }
    fr = run["frontier"]
    checks = [_ranking(errors_do, c, v2, (fr["r_star"], fr["kappa"]), "data-only P_attn L4")]
    full = full_rank_students(tables["train_metrics"])
    full = full[full["rung"].map(is_softmax)]
    S = spectra_matrix(full["spectrum"])
    errors_tr = {
        e: pd.Series(np.abs(estimate(S, e, tol=v2["numerical_tol"]) - full["r_star"].to_numpy()))
        for e in c["estimators"]
    }
    t = run["task"]
    checks.append(_ranking(errors_tr, c, v2, (t["r_star"], t["kappa"]), "learned softmax-ladder"))
    return checks


def _ranking(errors: dict, c: dict, v2: dict, grid, where: str) -> Check:
    if not errors or min(len(e) for e in errors.values()) == 0:
        return Check(None, f"{where}: no kernels")
    mean = {e: float(v.mean()) for e, v in errors.items()}
    n = min(len(v) for v in errors.values())
    order = ", ".join(
        f"{pretty_estimator(e)} {fmt(m)}" for e, m in sorted(mean.items(), key=lambda x: x[1])
    )
    energy = [
        e
        for e in mean
        if energy_tau(e) is not None
        and theory.admission(e, grid[0], grid[1], v2["estimator_margin"], where) is None
    ]
    others = [e for e in mean if energy_tau(e) is None]
    tie = c["tie_tolerance"]
    text = f"{where} ({n} kernels), mean |err|: {order}"
    if not energy or not others:
        return Check(None, f"{text}; no admitted energy rank or no competitor", INSUFFICIENT)
    best = min(energy, key=mean.get)
    rival = min(others, key=mean.get)
    margin = mean[rival] - mean[best]
    head = (f"{where}: best other − best r_E mean |err|", margin, ">=", tie, n)
    if n < v2["min_cases"]:
        return Check(
            None, f"{text} (insufficient data: < {v2['min_cases']} kernels)", INSUFFICIENT, head
        )
    if max(mean.values()) <= tie:
        return Check(
            None,
            f"{text}; every estimator exact: no distortion to rank (insufficient data)",
            INSUFFICIENT,
            head,
        )
    return Check(bool(margin > tie), f"{text}; best r_E: {pretty_estimator(best)}", headline=head)


CLAIM_V2 = claim_c8_v2
