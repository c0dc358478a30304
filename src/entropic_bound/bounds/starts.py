"""The registered starts of the best-known class bounds (docs/method.md §5b, "Best-known
bounds"): where each optimisation of a (task, rank) problem begins.

* ``teacher``: the teacher's truncated SVD and value map (registration v2's start;
  ``Problem.start`` None, bounds/optimise.py).
* ``random``: ``bounds.best.n_random`` seeded draws, Q, K with i.i.d. normal entries scaled so
  that E‖Q Kᵀ‖_F is the class's kernel norm (tasks: ``core.rungs.kernel_norm``), V with
  N(0, 1/d) entries; each from the stream (base seed, task id, rank, start index) of
  ``core.seeds.bound_start_stream``: the same draws in every run and job.
* ``student``: the final factors of each trained student of the task's own class at that rank,
  one start per student seed (train/factors.py).
"""

from __future__ import annotations

import pandas as pd
import torch

from entropic_bound.bounds.optimise import Start
from entropic_bound.core.rungs import kernel_dim, kernel_norm
from entropic_bound.core.seeds import bound_start_stream


def random_start(meta: dict, rank: int, index: int, base_seed: int) -> Start:
    """The ``index``-th random start of task ``meta``'s rank-``rank`` problem."""
    n, d = int(meta["n"]), int(meta["d"])
    k = kernel_dim(meta["class"], n, d)
    fro = kernel_norm(meta["class"], n, d, float(meta["gain"]))
    scale = (fro**2 / (k * k * rank)) ** 0.25  # E‖Q Kᵀ‖² = k² r scale⁴
    g = bound_start_stream(base_seed, meta["task_id"], rank, index)
    Q = torch.randn(k, rank, generator=g, dtype=torch.float64) * scale
    K = torch.randn(k, rank, generator=g, dtype=torch.float64) * scale
    V = torch.randn(d, d, generator=g, dtype=torch.float64) / d**0.5
    return Start(Q.numpy(), K.numpy(), V.numpy())


def student_starts(factors: pd.DataFrame, task_id: str, rank: int) -> list[Start]:
    """One start per trained student of ``task_id`` at ``rank`` (its seeds in order)."""
    if factors is None or factors.empty:
        return []
    rows = factors[(factors["task_id"] == task_id) & (factors["rank"] == rank)]
    rows = rows.sort_values("seed", kind="stable")
    return [Start(q, k, v) for q, k, v in zip(rows["Q"], rows["K"], rows["V"])]


def registered_starts(
    meta: dict, rank: int, routes, n_random: int, base_seed: int, factors
) -> list[tuple[str, Start | None]]:
    """(route, start) of every registered start of one problem, for the routes asked for
    (``teacher``, ``random``, ``student``; others ignored)."""
    out: list[tuple[str, Start | None]] = []
    if "teacher" in routes:
        out.append(("teacher", None))
    if "random" in routes:
        out += [("random", random_start(meta, rank, i, base_seed)) for i in range(n_random)]
    if "student" in routes:
        out += [("student", s) for s in student_starts(factors, meta["task_id"], rank)]
    return out
