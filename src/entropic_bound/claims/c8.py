"""C8, the energy effective rank is the estimator robust to softmax distortion. (docs/method.md §5)

The statement is the abstract's sentence; the test's thresholds come from config/claims.yaml.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from entropic_bound.analysis import (
    estimate_finite,
    exact_summary,
    full_rank_students,
    pretty_estimator,
    spectra_matrix,
)
from entropic_bound.claims.verdict import Check, claim, fmt

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
            bool(ours["exact_rate"] >= c["min_exact_rate"]),
            f"{pretty_estimator(est)} exact {ours['exact']}/{ours['n']} = {ours['exact_rate']:.2f}",
        ),
    ]


#: the registered claim (claims/registry.py lists them in order)
CLAIM = claim_c8
