"""C4, r* from data before training: P_static on the surrogate's tasks. (docs/method.md §5)

The statement is the abstract's sentence; the test's thresholds come from config/claims.yaml.
"""

from __future__ import annotations

from collections.abc import Mapping

from entropic_bound.analysis import (
    exact_summary,
    predictions_of,
)
from entropic_bound.claims.verdict import Check, claim, fmt, rate

#: the abstract's sentence this claim tests
STATEMENT = "r* is recoverable from data before training"


def _t_c4(claims: dict) -> str:
    c = claims["C4"]
    return (
        f"P_static on L0 = r* on ≥ {c['min_exact_rate_clean']:.0%} at σ = 0 and "
        f"≥ {c['min_exact_rate_noisy']:.0%} at σ = {fmt(c['noisy_sigma'])}"
    )


@claim("C4", STATEMENT, needs=("data_only_predictions",), threshold=_t_c4)
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
                f"σ = {fmt(sigma)}: {rate(s)}",
            )
        )
    return checks


#: the registered claim (claims/registry.py lists them in order)
CLAIM = claim_c4
