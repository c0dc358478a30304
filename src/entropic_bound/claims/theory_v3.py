"""What registration v3's checks stand on (docs/method.md §5c): counting in independent tasks
with Clopper–Pearson intervals, the tasks a run registers (not the rows it happens to hold), the
best-known bound R̂*_c(r) and the ε_task audit, the best-of-restarts risk curves, and the
Eckart–Young tail the deficiency magnitude is held to.

Conventions. A *unit* is an independent task (a teacher). A per-unit outcome is True, False or
NaN; NaN (a missing row, a NaN estimate or risk) is an unknown unit: a check decides by the
bounding rule (:func:`entropic_bound.claims.verdict.bound`: passed if it passes with the unknown
units against the claim, failed if it fails with them for it, else missing input naming them),
and the share it states counts them against the claim. Every check has a
``name`` (the controls table's row) and may be a *validation* (a property the mathematics
guarantees: reported, never counted toward a verdict).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from entropic_bound.claims.verdict import (
    INSUFFICIENT,
    Check,
    bounded,
    fmt,
    undecided_note,
    unknown_cells,
)

#: the columns of a registered task
TASK_COLUMNS = ["task_id", "rung", "r_star", "task_seed"]


# ---------------------------------------------------------------- counting


def _binom_cdf(k: int, n: int, p: float) -> float:
    """P(X ≤ k) for X ~ Binomial(n, p), summed in log space (n up to ~10⁵)."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    if p <= 0.0:
        return 1.0
    if p >= 1.0:
        return 0.0
    lp, lq = math.log(p), math.log1p(-p)
    logs = [
        math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * lp + (n - i) * lq
        for i in range(k + 1)
    ]
    top = max(logs)
    return min(1.0, math.exp(top) * sum(math.exp(v - top) for v in logs))


def clopper_pearson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The exact (Clopper–Pearson) two-sided interval of a binomial proportion k/n: the p at
    which P(X ≥ k) = α/2 (lower) and P(X ≤ k) = α/2 (upper), by bisection (no scipy); (0, 1)
    bounds at k = 0 and k = n; (NaN, NaN) for n = 0."""
    if n == 0:
        return (math.nan, math.nan)
    alpha = 1.0 - confidence

    def solve(f) -> float:  # f increasing in p, root in [0, 1]
        lo, hi = 0.0, 1.0
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if f(mid) < 0 else (lo, mid)
        return 0.5 * (lo + hi)

    lower = 0.0 if k == 0 else solve(lambda p: (1.0 - _binom_cdf(k - 1, n, p)) - alpha / 2)
    upper = 1.0 if k == n else solve(lambda p: alpha / 2 - _binom_cdf(k, n, p))
    return (lower, upper)


def adverse(outcome: pd.Series, at_most: bool = False) -> pd.Series:
    """Per-unit booleans with NaN resolved against the claim: False for an "at least" rate (a
    miss), True for an "at most" rate (a hit). The conservative number a headline states; a
    decision bounds the unknown cells instead (:func:`~entropic_bound.claims.verdict.bound`)."""
    return outcome.astype("boolean").fillna(at_most).astype(bool)


def combine(outcome: pd.Series, units: pd.Series, at_most: bool = False) -> pd.Series:
    """Kernels of one unit (``units``: the unit of each row) combined against the claim: for an
    "at least" rate a unit succeeds only if all its kernels do; for an "at most" rate it is a hit
    if any is. A kernel that decides the unit decides it; otherwise an unknown (NaN) kernel
    leaves the unit unknown (NaN), to be bounded by the rate."""
    b = pd.Series(outcome, dtype="object").astype("boolean")
    flags = pd.DataFrame(
        {"t": b.fillna(False), "f": (~b).fillna(False), "u": b.isna()}, index=outcome.index
    ).astype(bool)
    g = flags.groupby(units.to_numpy(), sort=True).sum()
    decided, rest = (g["t"] > 0, False) if at_most else (g["f"] > 0, True)
    out = [at_most if d else (np.nan if u else rest) for d, u in zip(decided, g["u"] > 0)]
    return pd.Series(out, index=g.index, dtype="object")


def rate_check(
    name: str,
    outcome: pd.Series,
    need: float,
    v3: dict,
    what: str,
    quantity: str,
    at_most: bool = False,
    unit: str = "tasks",
) -> Check:
    """A rate over independent units (one outcome per unit, labelled by its index; NaN is an
    unknown unit): the share ≥ ``need`` (≤ when ``at_most``), decided by the bounding rule; the
    share and its Clopper–Pearson interval are stated with the unknown units counted against the
    claim, and the unknown units are named; fewer than ``min_tasks`` units decide nothing; no
    unit at all is missing input (as for :func:`universal_check`: the run registers none, and
    more seeds would not give one). ``unit``: what a unit is called."""
    ok = adverse(outcome, at_most)
    n, hits = len(ok), int(ok.sum())
    if n == 0:
        return Check(None, f"{what}: no registered {unit}", name=name)
    share = hits / n
    lo, hi = clopper_pearson(hits, n, v3["confidence"])
    text = f"{what}: {hits}/{n} {unit} = {share:.2f} (95 % CI {lo:.2f}–{hi:.2f})"
    unknown = unknown_cells(outcome, unit)
    if unknown:
        text += unknown + " (counted against the claim in this share)"
    head = (quantity, share, "<=" if at_most else ">=", need, n)
    if n < v3["min_tasks"]:
        return Check(
            None,
            f"{text} (insufficient data: < {v3['min_tasks']} {unit})",
            INSUFFICIENT,
            head,
            name,
        )
    slack = v3["float_slack"]

    def passes(filled: pd.Series) -> bool:
        share = filled.mean()
        return share <= need + slack if at_most else share >= need - slack

    passed = bounded(outcome, passes, good=not at_most)
    return Check(passed, text + undecided_note(passed), headline=head, name=name)


def universal_check(
    name: str, outcome: pd.Series, what: str, head: tuple | None = None, unit: str = "tasks"
) -> Check:
    """ "Every unit" (``outcome`` indexed by unit; NaN an unknown unit): one counter-example
    decides at any n, the passes of every registered unit decide at any n too; an unknown unit
    without a counter-example leaves it undecided (missing input, naming the unit); no unit at
    all is missing input."""
    known = pd.Series(outcome, dtype="object").astype("boolean")
    n, good = len(known), int(known.fillna(False).sum())
    if n == 0:
        return Check(None, f"{what}: no registered {unit}", name=name)
    text = f"{what}: {good}/{n} {unit}"
    bad = list(known.index[(known == False).fillna(False).to_numpy()])  # noqa: E712
    if bad:
        text += f"; counter-examples: {', '.join(map(str, bad[:4]))}" + (
            " …" if len(bad) > 4 else ""
        )
    text += unknown_cells(outcome, unit)
    passed = bounded(outcome, lambda filled: filled.all())
    return Check(passed, text + undecided_note(passed), headline=head, name=name)


def validation(check: Check) -> Check:
    """The same check marked as a validation: reported, never counted toward the verdict."""
    check.validation = True
    return check


# ---------------------------------------------------------------- registered tasks


def registered_tasks(run: dict | None, rungs=None) -> pd.DataFrame:
    """The tasks of ``rungs`` (None: every rung) that the run's config registers (its task
    grid), whatever rows the tables hold: columns task_id, rung, r_star, task_seed."""
    from entropic_bound.tasks.grid import task_specs

    if run is None:
        return pd.DataFrame(columns=TASK_COLUMNS)
    specs = task_specs(run)
    want = {s.rung for s in specs} if rungs is None else set(rungs)
    rows = [(s.task_id, s.rung, s.r_star, s.seed) for s in specs if s.rung in want]
    return pd.DataFrame(rows, columns=TASK_COLUMNS)


def needs_run(run: dict | None, name: str) -> Check | None:
    """A check that needs the run's config (its registered tasks) says so without it."""
    if run is None:
        return Check(None, "the run's config is needed (the tasks it registers)", name=name)
    return None


def estimator_refusal(run: dict | None, estimator: str, v3: dict, name: str) -> Check | None:
    """None when the run's config is given and ``estimator`` is admitted on its task grid
    (theory.refusal_on_task_grid); else the check, named ``name``, that says why not."""
    from entropic_bound.claims import theory

    bad = needs_run(run, name) or theory.refusal_on_task_grid(estimator, run, v3)
    if bad is not None:
        bad.name = name
    return bad


def protocol_refusal(run: dict | None, v3: dict, name: str) -> Check | None:
    """None when the run trained with at least the registered restarts on every class; else the
    check that says the optimiser protocol was not run (missing input)."""
    if run is None:
        return needs_run(run, name)
    classes = run["train"]["classes"]
    default = classes.get("default", {})
    fewest = min(int({**default, **(c or {})}.get("restarts", 0)) for c in classes.values())
    if fewest >= v3["restarts"]:
        return None
    return Check(
        None,
        f"the registered optimiser protocol ({v3['restarts']} restart(s)) was not run: the "
        f"config's train.classes restarts is {fewest}",
        name=name,
    )


def tail(r_star: int, kappa: float, rank: int) -> float:
    """The Eckart–Young tail of the teacher's kernel spectrum s = linspace(1, 1/κ, r*) (its
    Frobenius rescaling cancels): Σ_{k>r} s_k² / Σ_k s_k²."""
    e = np.linspace(1.0, 1.0 / kappa, int(r_star)) ** 2
    return float(e[int(rank) :].sum() / e.sum())


# ---------------------------------------------------------------- bounds and targets


def has_best_bounds(bounds: pd.DataFrame) -> bool:
    return bounds is not None and "R_best" in bounds.columns


def best_bound(bounds: pd.DataFrame) -> dict[tuple[str, int], float]:
    """(task_id, rank) -> R̂*_c(r), the best-known bound (the least over the routes)."""
    b = bounds[["task_id", "rank", "R_best"]]
    return {(t, int(r)): float(v) for t, r, v in b.itertuples(index=False)}


def training_epsilon(bounds: pd.DataFrame, task_id: str, r_star: int, v3: dict) -> float:
    """The ε_task training used: min(ε, ½·R_bound(r* − 1)) from v2's route (ε at r* = 1); NaN
    when the table has no bound there."""
    if r_star == 1:
        return v3["epsilon"]
    b = bounds[(bounds["task_id"] == task_id) & (bounds["rank"] == r_star - 1)]["R_bound"]
    if b.empty or not np.isfinite(b.iloc[0]):
        return math.nan
    return min(v3["epsilon"], v3["epsilon_task_factor"] * float(b.iloc[0]))


def audited_epsilon(bounds: pd.DataFrame, tasks: pd.DataFrame, v3: dict) -> pd.DataFrame:
    """The ε_task audit per registered task: ``eps_used`` (training's), ``best_below``
    (R̂*_c(r* − 1)), ``eps`` (the target v3 judges with: ½·R̂*_c(r* − 1) where a rank-(r* − 1)
    model was found below eps_used, else eps_used) and ``audited`` (that case). NaN where a bound
    is missing (the task then counts against the claim)."""
    best = best_bound(bounds)
    rows = []
    for t in tasks.itertuples(index=False):
        used = training_epsilon(bounds, t.task_id, int(t.r_star), v3)
        below = 1.0 if t.r_star == 1 else best.get((t.task_id, int(t.r_star) - 1), math.nan)
        audited = bool(np.isfinite(below) and below < used)
        eps = v3["epsilon_task_factor"] * below if audited else used
        if not np.isfinite(below):
            eps = math.nan
        rows.append((t.task_id, used, below, eps, audited))
    return pd.DataFrame(rows, columns=["task_id", "eps_used", "best_below", "eps", "audited"])


def best_of_students(metrics: pd.DataFrame) -> pd.DataFrame:
    """Own-class students: per (task, rank) the best R over student seeds (restarts are already
    folded into each seed's row: the training stage keeps a student's better run) and how many
    seeds: columns task_id, rung, r_star, task_seed, rank, R_best_student, R_median, n_seeds."""
    from entropic_bound.analysis import own_class_rows

    own = own_class_rows(metrics)
    g = own.groupby(["task_id", "rung", "r_star", "task_seed", "rank"], sort=True)["R"]
    out = g.agg(R_best_student="min", R_median="median", n_seeds="count").reset_index()
    # a NaN risk of any seed makes the cell NaN (min would skip it)
    nan = own["R"].isna().groupby([own[k] for k in out.columns[:5]], sort=True).any()
    out.loc[nan.to_numpy(), "R_best_student"] = np.nan
    return out


def stall_note(metrics: pd.DataFrame, eps: pd.DataFrame, rung: str) -> str:
    """The single-run stall rate of a rung: students with r ≥ r* above their target (after the
    protocol's restarts, each seed alone), and how many restarts replaced a first run."""
    from entropic_bound.analysis import own_class_rows

    own = own_class_rows(metrics)
    own = own[(own["rung"] == rung) & (own["rank"] >= own["r_star"])]
    if own.empty:
        return ""
    target = own["task_id"].map(eps.set_index("task_id")["eps"])
    stalled = int(((own["R"] > target) | own["R"].isna()).sum())
    text = f"; single-run stall rate {stalled}/{len(own)} students with r ≥ r*"
    if "restart" in own.columns:
        text += f" ({int((own['restart'] > 0).sum())} kept a restart)"
    return text


def fmt_ratio(x: pd.Series) -> str:
    return f"min {fmt(x.min())}, median {fmt(x.median())}"


# ---------------------------------------------------------------- the frontier grid

#: an independent teacher of the frontier grid: its kernels over n, σ and β share it
FRONTIER_UNIT = ["value_map", "r_star", "seed"]


def frontier_rows(frontier: pd.DataFrame, estimator: str, **where) -> pd.DataFrame:
    """Frontier rows of one estimator (and ``where`` column = value filters; callables allowed)
    with ``err`` = |r̂ − r*| and ``hit`` (the rounded estimate is r*; NaN where r̂ is NaN)."""
    f = frontier[frontier["estimator"] == estimator]
    for col, want in where.items():
        f = f[want(f[col])] if callable(want) else f[f[col] == want]
    err = (f["r_hat"] - f["r_star"]).abs()
    hit = np.where(f["r_hat"].isna(), np.nan, np.floor(f["r_hat"] + 0.5) == f["r_star"])
    return f.assign(err=err, hit=pd.Series(hit, index=f.index, dtype="object"))


def units_of(rows: pd.DataFrame) -> pd.Series:
    """The frontier teacher of each row, as one label."""
    return rows[FRONTIER_UNIT].astype(str).agg("/".join, axis=1)
