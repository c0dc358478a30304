"""Stage ``best_bounds`` (workflow/rules/bounds.smk): the best-known class bound R̂*_c(r) of every
(task, rank) of registration v2's bounds table, after training (docs/method.md §5b,
"Best-known bounds").

R̂*_c(r) is the least risk found by independent routes, each a column of ``tables/bounds.csv``:

* ``R_bound``: registration v2's bound (L-BFGS on ``bounds.n_seqs`` sequences from the teacher's
  truncated SVD; L0 exact), unchanged;
* ``R_population``: the exact population objective (bounds/population.py) of the static
  classes L0, L1, L2 (NaN elsewhere), minimised from every registered start; L0 its closed form;
* ``R_lbfgs_teacher``, ``R_lbfgs_random``, ``R_lbfgs_student``: L-BFGS on the students' own
  training set (every ``task.n_train`` sequence; the static rungs through the sample's moments,
  bounds/moments.py), scored on the test split as the students are, from the teacher's SVD,
  the best of ``n_random`` seeded random starts, and the best over the trained students'
  factors (one start per student seed) (bounds/starts.py); each problem kept at its best
  training-risk iterate;
* ``R_students``: the least test R of the trained students of the task's class at that rank
  (over student seeds; with restarts, each student's kept run), from the training tables.

``R_best`` is the minimum over the finite routes, ``best_route`` its column, ``spread`` max/min
over the finite routes (how tight the bound is known), ``n_routes`` their count. A route not
asked for, not applicable, without its input (no student trained at that rank) or non-finite is
NaN in its column; no row is ever dropped.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from entropic_bound.bounds.stage import COLUMNS, tail_energy
from entropic_bound.core.progress import report
from entropic_bound.core.rungs import has_population

#: the routes, in the order of their columns
ROUTE_COLUMNS = {
    "population": "R_population",
    "teacher": "R_lbfgs_teacher",
    "random": "R_lbfgs_random",
    "student": "R_lbfgs_student",
    "students": "R_students",
}
ROUTES = tuple(ROUTE_COLUMNS)
#: the columns R_best is the minimum of: v2's bound and every route
CANDIDATES = ("R_bound", *ROUTE_COLUMNS.values())
#: the columns of the final tables/bounds.csv: v2's, then the routes and their summary
BEST_COLUMNS = (*COLUMNS, *ROUTE_COLUMNS.values(), "R_best", "best_route", "spread", "n_routes")
#: config ``bounds.best.ranks``: every rank of v2's table, or r* − 1 alone (ε_task's rank)
BEST_RANK_MODES = ("all", "knee")
#: the L-BFGS routes on the training set
_LBFGS = ("teacher", "random", "student")


def combine_routes(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with R_best, best_route, spread and n_routes from its :data:`CANDIDATES`
    columns (a missing one counts as NaN). Ties go to the earlier column."""
    values = np.column_stack(
        [
            table[c].to_numpy(np.float64) if c in table else np.full(len(table), np.nan)
            for c in CANDIDATES
        ]
    )
    finite = np.isfinite(values)
    out = table.copy()
    n = finite.sum(axis=1)
    masked = np.where(finite, values, np.inf)
    best = masked.min(axis=1)
    which = masked.argmin(axis=1)
    top = np.where(finite, values, -np.inf).max(axis=1)
    out["R_best"] = np.where(n > 0, best, np.nan)
    out["best_route"] = [CANDIDATES[w] if k else "" for w, k in zip(which, n)]
    with np.errstate(divide="ignore", invalid="ignore"):
        out["spread"] = np.where((n > 0) & (best > 0), top / best, np.nan)
    out["n_routes"] = n.astype(np.int64)
    return out


def students_route(metrics: pd.DataFrame, rung: str) -> dict[tuple[str, int], float]:
    """(task_id, rank) -> the least test R of the rung's own-class sweep students there."""
    if metrics is None or metrics.empty:
        return {}
    own = metrics[(metrics["student_class"] == rung) & ~metrics["static_student"].astype(bool)]
    best = own.groupby(["task_id", "rank"])["R"].min()
    return {(t, int(r)): float(v) for (t, r), v in best.items()}


def _finite_min(values) -> float:
    good = [v for v in values if math.isfinite(v)]
    return min(good) if good else math.nan


def _settings(b: dict, static: bool):
    """L-BFGS's settings: ``static_iter`` iterations where the objective is free of the sample's
    size (the population objective, a static rung's moments), else ``max_iter``; ``chunk``
    problems at a time (they share L-BFGS's line search: fewer converge less well)."""
    from entropic_bound.bounds.optimise import BoundSettings

    iters = b["static_iter"] if static else b["max_iter"]
    return BoundSettings(None, iters, b["grad_tol"], b["chunk"])


def rung_best_bounds(
    cfg: dict,
    rung: str,
    task_paths,
    v2: pd.DataFrame,
    factors=None,
    metrics=None,
    progress=None,
    grams=None,
) -> pd.DataFrame:
    """The final bounds rows of one rung's tasks (``task_paths``): v2's rows (``v2``: the rung's rows of its
    bounds job's table, every column kept as it is) with every route's column and the summary
    of :func:`combine_routes`. ``factors``: the trained students' factors (train/factors.py),
    ``metrics``: the rung's sweep metrics (None: those routes NaN). ``grams``: per task path, a
    file of P_static's Σ xᵀx (tasks/files.py's ``write_gram``, written by predict) that a static rung's moments
    read in place of forming it (bitwise the same G; absent or another X's: formed here)."""
    b = cfg["bounds"]["best"]
    routes = set(b["routes"])
    if b["ranks"] not in BEST_RANK_MODES:
        raise ValueError(
            f"bounds.best.ranks {b['ranks']!r}; use one of {', '.join(BEST_RANK_MODES)}"
        )
    # the (task, rank) problems: every rank of v2's table, or r* − 1 alone
    ranks = {
        (t, int(r))
        for t, r, rs in zip(v2["task_id"], v2["rank"], v2["r_star"])
        if b["ranks"] == "all" or int(r) == int(rs) - 1
    }
    # every training sequence (the students' set) where an L-BFGS route reads them (_loaded)
    static = has_population(rung)
    sample = bool(routes & set(_LBFGS)) and (static or b["max_iter"] > 0)
    grams = grams or {}
    tasks = [_loaded(p, sample, static, {t for t, _ in ranks}, grams.get(p)) for p in task_paths]
    index = {m["task_id"]: i for i, (_, m) in enumerate(tasks)}
    v2 = v2[v2["task_id"].isin(index)].reset_index(drop=True)
    pairs = [(index[t], int(r)) for t, r in zip(v2["task_id"], v2["rank"]) if (t, int(r)) in ranks]
    found: dict[tuple[int, int, str], list[float]] = {}
    if pairs:
        _optimised_routes(cfg, tasks, pairs, routes, factors, found, progress)
    students = students_route(metrics, rung) if "students" in routes else {}
    table = v2.copy()
    for route, col in ROUTE_COLUMNS.items():
        values = []
        for t, r in zip(v2["task_id"], v2["rank"]):
            if route == "students":
                values.append(students.get((t, int(r)), math.nan))
            else:
                values.append(_finite_min(found.get((index[t], int(r), route), [])))
        table[col] = np.asarray(values, dtype=np.float64)
    return combine_routes(table)[list(BEST_COLUMNS)]


def _loaded(path, sample: bool, static: bool, posed, gram_path=None) -> tuple[dict, dict]:
    """(arrays, meta) of a task file as the routes read it: every training sequence where an
    L-BFGS route reads the sample (else one: a file without data makes only what is read,
    tasks/parts.py); for a static rung, its training split's moments in place of the split
    (bounds/moments.py) when the task poses a problem (its id in ``posed``), else no split, so
    that the job holds one task's sample at a time, not the rung's. ``gram_path``: P_static's
    Σ xᵀx of the stream (used when it is this task's X)."""
    from entropic_bound.bounds.moments import moments_route, with_moments
    from entropic_bound.tasks.files import load_task, read_gram, task_meta

    gram, light = None, False
    if sample and static and gram_path:
        head = task_meta(path)
        if head["task_id"] in posed:
            gram = read_gram(gram_path, head["task_id"])
            # a noise-free task's moments are its gram's and its teacher's (bounds/moments.py):
            # the training split is not made (at d = n = 128, 2 GB of float32 and its time)
            light = (
                gram is not None
                and float(head["sigma"]) == 0.0
                and moments_route(int(head["n"]), int(head["d"])) == "products"
            )
    arrays, meta = load_task(path, train=None if sample and not light else 1)
    if not (sample and static):
        return arrays, meta
    if meta["task_id"] in posed:
        sequences = int(meta["n_train"]) if light else None
        return with_moments(arrays, meta, gram, sequences), meta
    return {k: v for k, v in arrays.items() if k not in ("X_train", "Y_train")}, meta


def _optimised_routes(cfg, tasks, pairs, routes, factors, found, progress) -> None:
    """Run the population and training-set L-BFGS routes of ``pairs`` (task index, rank); each
    result goes to ``found[(task, rank, route)]`` (a list: one value per start)."""
    from entropic_bound.bounds.moments import MomentBatch
    from entropic_bound.bounds.optimise import Problem, optimised_bounds
    from entropic_bound.bounds.population import population_bounds
    from entropic_bound.bounds.starts import registered_starts

    b = cfg["bounds"]["best"]
    metas = [m for _, m in tasks]
    rung = metas[0]["class"]
    starts = {
        (i, r): registered_starts(metas[i], r, routes, b["n_random"], cfg["seed"], factors)
        for i, r in pairs
    }
    labelled = [(route, Problem(i, r, s)) for (i, r), ss in starts.items() for route, s in ss]
    steps = int("population" in routes and has_population(rung)) + int(bool(routes & set(_LBFGS)))
    done = 0
    if "population" in routes and has_population(rung):
        if rung == "L0":  # the objective's closed form: Eckart–Young's tail, exact
            for i, r in pairs:
                found[(i, r, "population")] = [tail_energy(metas[i]["kernel_singular_values"], r)]
        else:
            # every start, the population objective needs no V: all its Q, K starts at once
            problems = [Problem(i, r, None) for i, r in pairs] + [
                p for route, p in labelled if route != "teacher"
            ]
            for p, row in zip(problems, population_bounds(tasks, problems, _settings(b, True))):
                found.setdefault((p.task, p.rank, "population"), []).append(row["R"])
        done += 1
        report(progress, done, steps)
    # the input-dependent rungs pay a pass over every training sequence per evaluation:
    # max_iter 0 leaves their L-BFGS routes NaN
    static = has_population(rung)
    lbfgs = [(route, p) for route, p in labelled if route in _LBFGS]
    if lbfgs and (static or b["max_iter"] > 0):
        # a static rung's training risk from its sample's moments (bounds/moments.py): exact,
        # and free of the sample's size
        batch = MomentBatch if static else None
        problems = [p for _, p in lbfgs]
        s = _settings(b, static)
        rows = optimised_bounds(tasks, problems, s, keep_best=True, batch=batch)
        for (route, p), row in zip(lbfgs, rows):
            found.setdefault((p.task, p.rank, route), []).append(row["R_bound"])
        done += 1
        report(progress, done, steps)
