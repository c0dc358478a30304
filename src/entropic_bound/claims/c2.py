"""C2, achievability: the surrogate's bound is reached at r = r*. (docs/method.md §5)

The statement is the abstract's sentence; the test's thresholds come from config/claims.yaml.
"""

from __future__ import annotations

from collections.abc import Mapping

from entropic_bound.analysis import (
    risk_curves,
)
from entropic_bound.claims.checks import (
    achievability,
    achievability_v2,
)
from entropic_bound.claims.verdict import Check, claim, fmt

#: the abstract's sentence this claim tests
STATEMENT = "the bound is achievable at r*"


def _t_c2(claims: dict) -> str:
    return f"L0: R(r*) ≤ {fmt(claims['C2']['max_risk'])} on every task"


@claim("C2", STATEMENT, needs=("train_metrics",), threshold=_t_c2)
def claim_c2(tables: Mapping, claims: dict) -> list[Check]:
    """L0: median R at r = r* ≤ max_risk on every task."""
    curves = risk_curves(tables["train_metrics"])
    return [achievability(curves, "L0", claims["C2"]["max_risk"])]


#: the registered claim (claims/registry.py lists them in order)
CLAIM = claim_c2


# ---------------------------------------------------------------- registration v2


def _t_c2_v2(v2: dict) -> str:
    return f"L0: R(r*) ≤ ε_task = min({fmt(v2['epsilon'])}, ½·R*_L0(r* − 1)) on every task"


@claim("C2", STATEMENT, ("train_metrics", "bounds"), _t_c2_v2, registration="v2")
def claim_c2_v2(tables: Mapping, v2: dict, run: dict | None) -> list[Check]:
    """L0: the median R at r = r* is ≤ the task's ε_task on every task (≥ min_cases tasks)."""
    return [achievability_v2(risk_curves(tables["train_metrics"]), tables["bounds"], "L0", v2)]


CLAIM_V2 = claim_c2_v2


# ---------------------------------------------------------------- registration v3


def _t_c2_v3(v3: dict) -> str:
    return "L0: best-of (seeds × restarts) R(r*) ≤ ε_task (audited) on every task"


@claim("C2", STATEMENT, ("train_metrics", "bounds"), _t_c2_v3, registration="v3")
def claim_c2_v3(tables: Mapping, v3: dict, run: dict | None) -> list[Check]:
    """Achievability on L0, a universal check over the registered tasks (docs/method.md §5c)."""
    from entropic_bound.claims import checks_v3, theory_v3

    name = "C2 achievability (L0)"
    bad = theory_v3.protocol_refusal(run, v3, name)
    if bad is not None:
        return [bad]
    tasks = theory_v3.registered_tasks(run, ["L0"])
    return [
        checks_v3.achievability_v3(tables["train_metrics"], tables["bounds"], tasks, "L0", v3, name)
    ]


CLAIM_V3 = claim_c2_v3
