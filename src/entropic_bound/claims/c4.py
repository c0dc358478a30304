"""C4, r* from data before training: P_static on the surrogate's tasks. (docs/method.md §5)

The statement is the abstract's sentence; the test's thresholds come from config/claims.yaml.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from entropic_bound.analysis import (
    exact_summary,
    predictions_of,
)
from entropic_bound.claims import theory
from entropic_bound.claims.verdict import INSUFFICIENT, Check, claim, fmt, rate

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
        # the headline is the noisy-copy check, the harder of the two
        head = (
            f"P_static = r* rate on L0 at σ = {fmt(sigma)}",
            s["exact_rate"],
            ">=",
            need,
            s["n"],
        )
        checks.append(
            Check(
                None if s["n"] == 0 else bool(s["exact_rate"] >= need - slack),
                f"σ = {fmt(sigma)}: {rate(s)}",
                headline=head if sigma > 0 else None,
            )
        )
    return checks


#: the registered claim (claims/registry.py lists them in order)
CLAIM = claim_c4


# ---------------------------------------------------------------- registration v2


def _t_c4_v2(v2: dict) -> str:
    c = v2["C4"]
    return (
        f"P_static on L0 = r* on ≥ {c['min_exact_rate_clean']:.0%} at σ = 0 and "
        f"≥ {c['min_exact_rate_noisy']:.0%} at σ = {fmt(c['noisy_sigma'])} with "
        f"B ≥ {v2['budget_factor']}·n·d sequences"
    )


@claim("C4", STATEMENT, ("data_only_predictions",), _t_c4_v2, registration="v2")
def claim_c4_v2(tables: Mapping, v2: dict, run: dict | None) -> list[Check]:
    """P_static on L0 with the v2 estimator: exact on the clean tasks; on noisy copies only at
    a data budget of B ≥ budget_factor·n·d (below it the least squares does not average noise:
    insufficient data, not a failure)."""
    c, est = v2["C4"], v2["estimator"]
    bad = theory.refusal_on_task_grid(est, run, v2)
    if bad is not None:
        return [bad]
    checks = []
    for sigma, need in (
        (0.0, c["min_exact_rate_clean"]),
        (c["noisy_sigma"], c["min_exact_rate_noisy"]),
    ):
        unmade = theory.sigma_not_made(run, sigma)
        if unmade is not None:
            checks.append(unmade)
            continue
        p = predictions_of(tables["data_only_predictions"], est, "P_static", sigma)
        p = p[p["class"] == "L0"]
        check = theory.counted(
            p["r_round"] == p["r_star"],
            need,
            v2,
            f"σ = {fmt(sigma)}: P_static = r*",
            f"exact rate at σ = {fmt(sigma)}",
        )
        if sigma > 0:
            t = run["task"]
            budget = v2["budget_factor"] * t["n"] * t["d"]
            if t["n_train"] < budget:
                check = Check(
                    None,
                    f"σ = {fmt(sigma)}: not judged: B = {t['n_train']} < {v2['budget_factor']}·n·d = {budget}"
                    f" (insufficient data; {check.measured})",
                    INSUFFICIENT,
                )
        checks.append(check)
    return checks


CLAIM_V2 = claim_c4_v2


# ---------------------------------------------------------------- registration v3


def _t_c4_v3(v3: dict) -> str:
    c = v3["C4"]
    return (
        f"P_static on L0 = r* on every task at σ = 0, and on ≥ {c['min_exact_rate_noisy']:.0%} "
        f"of tasks at σ = {fmt(c['noisy_sigma'])} with B ≥ {v3['budget_factor']}·n·d"
    )


@claim("C4", STATEMENT, ("data_only_predictions",), _t_c4_v3, registration="v3")
def claim_c4_v3(tables: Mapping, v3: dict, run: dict | None) -> list[Check]:
    """P_static (v3 estimator) on the registered L0 tasks: universal at σ = 0; a rate on the
    noisy copies, judged only at the data budget (docs/method.md §5b, §5c)."""
    from entropic_bound.claims import checks_v3, theory_v3

    c, est = v3["C4"], v3["estimator"]
    names = ("C4 clean (L0, σ = 0)", "C4 noisy copies")
    bad = theory_v3.estimator_refusal(run, est, v3, names[0])
    if bad is not None:
        return [bad]
    tasks = theory_v3.registered_tasks(run, ["L0"])
    preds = tables["data_only_predictions"]
    clean = checks_v3.predicted_exact(preds, est, "P_static", 0.0, tasks)
    n = len(clean)
    checks = [
        theory.sigma_not_made(run, 0.0, names[0])
        or theory_v3.universal_check(
            names[0],
            clean,
            "σ = 0: P_static = r*",
            (
                "exact rate at σ = 0",
                float(theory_v3.adverse(clean).mean()) if n else np.nan,
                ">=",
                1.0,
                n,
            ),
        )
    ]
    noisy = checks_v3.predicted_exact(preds, est, "P_static", c["noisy_sigma"], tasks)
    check = theory_v3.rate_check(
        names[1],
        noisy,
        c["min_exact_rate_noisy"],
        v3,
        f"σ = {fmt(c['noisy_sigma'])}: P_static = r*",
        f"exact rate at σ = {fmt(c['noisy_sigma'])}",
    )
    unmade = theory.sigma_not_made(run, c["noisy_sigma"], names[1])
    if unmade is not None:  # the run made no such copies: nothing to judge, whatever B is
        return checks + [unmade]
    t = run["task"]
    budget = v3["budget_factor"] * t["n"] * t["d"]
    if t["n_train"] < budget:
        check = Check(
            None,
            f"σ = {fmt(c['noisy_sigma'])}: not judged: B = {t['n_train']} < "
            f"{v3['budget_factor']}·n·d = {budget} (insufficient data; {check.measured})",
            INSUFFICIENT,
            name=names[1],
        )
    return checks + [check]


CLAIM_V3 = claim_c4_v3
