"""What registration v2's tests stand on (docs/method.md §5b): each task's class bound and ε_task,
the admission of a parametric estimator on a grid, the data budget, and rates that state their
denominator and refuse to decide on too few cases.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from entropic_bound.analysis import own_class_curves
from entropic_bound.claims.verdict import ILL_POSED, INSUFFICIENT, Check, fmt
from entropic_bound.core.estimators import energy_tau


def true_tail(r_star: int, kappa: float) -> float:
    """Energy of the teacher's spectrum s = linspace(1, 1/κ, r*) from component r* on (the last
    one): Σ_{k ≥ r*} s_k² / Σ s_k², the margin r_E(τ) has before it stops at r* − 1."""
    s = np.linspace(1.0, 1.0 / kappa, r_star)
    return float(s[-1] ** 2 / np.sum(s**2))


def admission(estimator: str, r_stars, kappa: float, margin: float, grid: str) -> Check | None:
    """None when ``estimator`` may be used on this grid, else an ILL_POSED check saying why.

    r_E(τ) returns r* on a true spectrum only if the last component's energy share exceeds
    1 − τ; v2 asks for ``margin`` times that on every task of the grid. Estimators without a
    parameter are always admitted."""
    tau = energy_tau(estimator)
    if tau is None:
        return None
    worst = min(r_stars, key=lambda r: true_tail(r, kappa))
    tail = true_tail(worst, kappa)
    if tail >= margin * (1 - tau):
        return None
    return Check(
        None,
        f"{estimator} ill-posed on the {grid} grid: at r* = {worst}, κ = {fmt(kappa)} the last "
        f"component holds {fmt(tail)} of the energy < {fmt(margin)}·(1 − τ) = "
        f"{fmt(margin * (1 - tau))}",
        ILL_POSED,
    )


def refusal_on_task_grid(estimator: str, run: dict | None, v2: dict) -> Check | None:
    """None when ``estimator`` may be used on the run's task grid (its r* and κ); else the
    check that says why not: no run config to judge by, or ill-posed (:func:`admission`)."""
    if run is None:
        return Check(None, "the run's config is needed for the estimator's admission")
    t = run["task"]
    return admission(
        estimator, list(t["r_star"]), float(t["kappa"]), v2["estimator_margin"], "task"
    )


def sigma_not_made(run: dict | None, sigma: float = 0.0, name: str | None = None) -> Check | None:
    """None when the run made P_static's predictions at noise ``sigma``: its tasks' own σ
    (``task.sigma``) or one of its noisy copies (``predict.noisy_sigmas``), or when there is no
    run config to judge by; else the missing-input check, named ``name``, of a test that reads
    them. A run whose tasks carry noise makes no σ = 0 tasks, and a run without the registered
    noisy copy makes none of it: their absence is not evidence against the claim, whereas a task
    the run did make and left without a row still counts against it (docs/method.md §5c, "Tests
    at a σ the run never made")."""
    if run is None:
        return None
    copies = (run.get("predict") or {}).get("noisy_sigmas")
    made = [float(run["task"].get("sigma", 0.0)), *map(float, copies or [])]
    if any(np.isclose(sigma, m) for m in made):
        return None
    if copies is None and sigma > made[0]:  # the config does not say which copies it made
        return None
    return Check(
        None,
        f"the test reads P_static at σ = {fmt(sigma)}; this run made its tasks at σ = "
        f"{fmt(made[0])} and noisy copies at {', '.join(fmt(m) for m in made[1:]) or 'none'} "
        f"(missing input)",
        name=name,
    )


def with_bounds(curves: pd.DataFrame, bounds: pd.DataFrame, rounding: float) -> pd.DataFrame:
    """Own-class median-R rows of the trained ranks that have a class bound, with ``bound``
    (R*_c(r) as the bounds stage found it) and ``beaten``: the student's R is below it by more
    than ``rounding`` (relative), so the optimised bound is not the optimum there.

    A beaten bound is reported, not lowered to the student's R: lowered, every deficiency test
    R ≥ ½·R*_c(r) would pass by construction, and training has already read the table (its
    ε_task) as it stands (docs/method.md §5b)."""
    own = own_class_curves(curves)
    b = bounds[["task_id", "rank", "R_bound"]]
    out = own.merge(b, on=["task_id", "rank"], how="inner")
    beaten = out["R"] < (1 - rounding) * out["R_bound"]
    return out.assign(bound=out["R_bound"], beaten=beaten)


def epsilon_task(curves: pd.DataFrame, bounds: pd.DataFrame, v2: dict) -> dict[str, float]:
    """task_id -> ε_task = min(ε, factor·R*_c(r* − 1)) for every task of ``curves``; a task
    whose bound at r* − 1 is absent keeps ε (r* = 1: the best rank-0 model has R = 1)."""
    eps, factor = v2["epsilon"], v2["epsilon_task_factor"]
    at = {(t, int(r)): float(v) for t, r, v in bounds[["task_id", "rank", "R_bound"]].values}
    out = {}
    for t, r_star in curves[["task_id", "r_star"]].drop_duplicates().values:
        below = 1.0 if r_star == 1 else at.get((t, int(r_star) - 1), np.nan)
        out[t] = eps if not np.isfinite(below) else min(eps, factor * below)
    return out


def counted(
    ok: pd.Series, need: float, v2: dict, what: str, quantity: str, at_most: bool = False
) -> Check:
    """A rate check: the share of True in ``ok`` (NaN counts as False) ≥ ``need`` (≤ when
    ``at_most``); fewer than ``min_cases`` cases decide nothing (INSUFFICIENT)."""
    n = len(ok)
    hits = int(ok.astype("boolean").fillna(False).sum())
    share = hits / n if n else float("nan")
    text = f"{what}: {hits}/{n}" + (f" = {share:.2f}" if n else "")
    head = (quantity, share, "<=" if at_most else ">=", need, n)
    if n < v2["min_cases"]:
        return Check(
            None, f"{text} (insufficient data: < {v2['min_cases']} cases)", INSUFFICIENT, head
        )
    slack = v2["float_slack"]
    passed = share <= need + slack if at_most else share >= need - slack
    return Check(bool(passed), text, headline=head)
