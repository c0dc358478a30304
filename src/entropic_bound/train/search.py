"""Rank search: find the empirical knee without training every rank (``train.ranks: search``).

The knee r_emp of a task is the least rank whose median R over the student seeds is ≤ ε
(docs/method.md §4). A full sweep trains every rank 1…k; at d = 64 that is 64 ranks per task. R is
non-increasing in r (a rank-r student can represent every rank-(r−1) kernel), so the knee can
be found by bisection on r instead, in rounds; each round is ONE batched engine program over the
pending ranks of all the job's tasks:

1. round 1, the coarse curve: every power of two ≤ k, and k (the full-rank student of C3/C8).
   The least passing power p brackets the knee in (p/2, p] (or (0, 1] when p = 1);
2. bisection inside the bracket, one rank per task per round, until it is one rank wide: then
   r_emp = its upper end, and r_emp − 1 (its lower end) is trained and fails;
3. r_emp + 1, where it is not trained yet (merged into the rounds of the other tasks).

So F1 still shows deficiency below the knee and flatness above it, and every trained rank below
r_emp fails: the least trained rank with median R ≤ ε, which analysis.empirical_knees reads from
the tables, is the knee the search found. A task whose full-rank student fails has no knee.

The search never reads r* or any teacher quantity, by construction: :func:`bisect_knees` sees
only a ``train_round`` callback that returns median risks, and :func:`train_by_search` hands the
engine copies of the tasks stripped of everything but the data (:func:`blind_task`); r* and the
tail energy R*(r) are added to the tables afterwards (:func:`with_teacher`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

#: what the engine needs of a task, and all a searched task keeps (the data, not the teacher)
DATA_ARRAYS = ("X_train", "Y_train", "X_test", "Y_test", "P")
DATA_META = ("task_id", "class", "seed", "n", "d", "beta", "sigma", "test_clean_power")

RANK_MODES = ("all", "search")


@dataclass
class Knee:
    """The search state of one task: the bracket (lo fails, hi passes) and the ranks trained."""

    k: int
    lo: int = 0  # a failing rank (0: none trained yet, R(0) = 1 > ε)
    hi: int | None = None  # the least passing rank found so far
    risk: dict[int, float] = field(default_factory=dict)  # median R per trained rank

    @property
    def r_emp(self) -> int | None:
        return self.hi if self.hi is not None and self.hi - self.lo == 1 else None

    def pending(self) -> list[int]:
        """The ranks this task trains in the next round ([] when it is done)."""
        if not self.risk:
            return coarse_ranks(self.k)
        if self.hi is None:
            return []  # even the full-rank student fails: no knee
        if self.hi - self.lo > 1:
            return [(self.lo + self.hi) // 2]
        return [r for r in (self.hi + 1,) if r <= self.k and r not in self.risk]

    def record(self, rank: int, risk: float, epsilon: float) -> None:
        self.risk[rank] = risk
        if risk <= epsilon:
            self.hi = rank if self.hi is None else min(self.hi, rank)
        self.lo = max([r for r, v in self.risk.items() if v > epsilon and r < (self.hi or 0)] + [0])


def coarse_ranks(k: int) -> list[int]:
    """Powers of two up to k, and k itself."""
    return sorted({2**j for j in range(k.bit_length()) if 2**j <= k} | {k})


def bisect_knees(
    train_round: Callable[[list[tuple[int, int]]], dict[tuple[int, int], float]],
    n_tasks: int,
    k: int,
    epsilon,
) -> list[Knee]:
    """Knees of ``n_tasks`` tasks whose students have ranks 1…k.

    ``train_round(requests)`` trains the (task index, rank) pairs ``requests`` (every student
    seed of each) in one program and returns their median R. ``epsilon``: one float, or one per
    task (ε_task). Returns each task's :class:`Knee`.
    """
    eps = np.broadcast_to(np.asarray(epsilon, dtype=np.float64), (n_tasks,))
    knees = [Knee(k) for _ in range(n_tasks)]
    while requests := [(t, r) for t, kn in enumerate(knees) for r in kn.pending()]:
        risks = train_round(requests)
        for t, r in requests:
            knees[t].record(r, float(risks[(t, r)]), float(eps[t]))
    return knees


def blind_task(arrays: dict, meta: dict) -> tuple[dict, dict]:
    """A task as the search may see it: its data and shapes, no r*, no teacher kernel or V."""
    return {a: arrays[a] for a in DATA_ARRAYS}, {m: meta[m] for m in DATA_META}


def with_teacher(df: pd.DataFrame, metas: list[dict]) -> pd.DataFrame:
    """Fill the r_star and R_theory columns of a searched table from the tasks' metas (left
    NaN where the metas lack them)."""
    from entropic_bound.train.engine import tail_energy

    by_id = {m["task_id"]: m for m in metas}
    out = df.copy()
    if all("r_star" in m for m in metas):
        out["r_star"] = out["task_id"].map(lambda t: by_id[t]["r_star"]).astype(np.int64)
    if "R_theory" in out and all("kernel_singular_values" in m for m in metas):
        out["R_theory"] = [
            tail_energy(by_id[t]["kernel_singular_values"], int(r))
            for t, r in zip(out["task_id"], out["rank"])
        ]
    return out


def train_by_search(tasks, student_class: str, seeds, optim, *, k: int, epsilon, **kw):
    """Train the ranks the search picks on every task; the engine's three tables, plus a
    ``search`` table (task_id, r_emp, rounds, ranks_trained) that records the search.

    ``tasks``: (arrays, meta) pairs as for ``engine.train_students`` (other keyword arguments
    are passed on to it). The engine and the search see only :func:`blind_task` copies.
    """
    from entropic_bound.train.restarts import train_restarting

    blind = [blind_task(a, m) for a, m in tasks]
    parts: dict[str, list[pd.DataFrame]] = {"metrics": [], "dynamics": [], "loss": []}
    rounds = []

    def train_round(requests):
        rows = [(t, j, r) for t, r in requests for j in range(len(seeds))]
        out = train_restarting(
            blind, student_class, None, seeds, optim, rows=rows, epsilon=epsilon, **kw
        )  # epsilon per task indexes the blind task list, as the rows do
        for name, df in out.items():  # factors too, when asked for
            parts.setdefault(name, []).append(df)
        rounds.append(len(requests))
        m = out["metrics"]
        index = {meta["task_id"]: t for t, (_, meta) in enumerate(blind)}
        med = m.groupby(["task_id", "rank"])["R"].median()
        return {(index[tid], int(r)): v for (tid, r), v in med.items()}

    knees = bisect_knees(train_round, len(blind), k, epsilon)
    order = {m["task_id"]: t for t, (_, m) in enumerate(tasks)}
    metas = [m for _, m in tasks]

    def assemble(name, keys):
        # the row order of a sweep's tables: metrics in layout order (task, seed, rank),
        # dynamics and loss as engine._long_rows sorts them
        df = pd.concat(parts[name], ignore_index=True)
        df = df.assign(_t=df["task_id"].map(order)).sort_values(keys, kind="stable")
        return with_teacher(df.drop(columns="_t").reset_index(drop=True), metas)

    search = pd.DataFrame(
        {
            "task_id": [m["task_id"] for m in metas],
            "r_emp": [np.nan if kn.r_emp is None else float(kn.r_emp) for kn in knees],
            "rounds": len(rounds),
            "ranks_trained": [" ".join(map(str, sorted(kn.risk))) for kn in knees],
        }
    )
    out = {
        "metrics": assemble("metrics", ["_t", "seed", "rank"]),
        "dynamics": assemble("dynamics", ["task_id", "rank", "seed", "step"]),
        "loss": assemble("loss", ["task_id", "rank", "seed", "step"]),
        "search": search,
    }
    if "factors" in parts:
        out["factors"] = pd.concat(parts["factors"], ignore_index=True)
    return out
