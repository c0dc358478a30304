"""C3, recovery: gradient descent's learned kernel has rank r*. (docs/method.md §5)

The statement is the abstract's sentence; the test's thresholds come from config/claims.yaml.
"""

from __future__ import annotations

from collections.abc import Mapping

from entropic_bound.analysis import (
    pretty_estimator,
)
from entropic_bound.claims.checks import (
    recovery,
    recovery_v2,
)
from entropic_bound.claims.verdict import Check, claim

#: the abstract's sentence this claim tests
STATEMENT = "gradient descent recovers this rank under standard low-rank implicit-bias assumptions"


def _t_c3(claims: dict) -> str:
    return (
        f"L0 full-rank student: {pretty_estimator(claims['estimator'])}(learned) = r* on "
        f"≥ {claims['C3']['min_exact_rate']:.0%} of tasks×seeds"
    )


@claim("C3", STATEMENT, needs=("train_metrics",), threshold=_t_c3)
def claim_c3(tables: Mapping, claims: dict) -> list[Check]:
    """L0 full-rank student: estimator(learned kernel) = r* for ≥ min_exact_rate of tasks × seeds."""
    return [recovery(tables["train_metrics"], "L0", claims)]


#: the registered claim (claims/registry.py lists them in order)
CLAIM = claim_c3


# ---------------------------------------------------------------- registration v2


def _t_c3_v2(v2: dict) -> str:
    est = pretty_estimator(v2["estimator"])
    return f"L0 full-rank student: {est}(learned) = r* on ≥ {v2['C3']['min_exact_rate']:.0%}"


@claim("C3", STATEMENT, ("train_metrics",), _t_c3_v2, registration="v2")
def claim_c3_v2(tables: Mapping, v2: dict, run: dict | None) -> list[Check]:
    """L0: the v2 estimator (admitted on the task grid) on learned full-rank kernels = r*."""
    return recovery_v2(tables["train_metrics"], "L0", v2, run, v2["C3"]["min_exact_rate"])


CLAIM_V2 = claim_c3_v2


# ---------------------------------------------------------------- registration v3


def _t_c3_v3(v3: dict) -> str:
    return (
        f"L0 full-rank students: {v3['estimator']} of the learned kernel = r* on "
        f"≥ {v3['C3']['min_exact_rate']:.0%} of tasks (every seed)"
    )


@claim("C3", STATEMENT, ("train_metrics",), _t_c3_v3, registration="v3")
def claim_c3_v3(tables: Mapping, v3: dict, run: dict | None) -> list[Check]:
    """Recovery on L0, counted in tasks (docs/method.md §5c)."""
    from entropic_bound.claims import checks_v3, theory_v3

    name = "C3 recovery (L0)"
    bad = theory_v3.needs_run(run, name)
    if bad is not None:
        return [bad]
    tasks = theory_v3.registered_tasks(run, ["L0"])
    need = v3["C3"]["min_exact_rate"]
    return [checks_v3.recovery_v3(tables["train_metrics"], tasks, "L0", v3, run, need, name)]


CLAIM_V3 = claim_c3_v3
