"""Stage ``bounds`` (workflow/rules/bounds.smk): the class bound R*_c(r) of every task of a rung
at the ranks the claims test, and the task's ε_task (docs/method.md §5b).

ε_task = min(ε, ½·R*_c(r* − 1)): a student "reaches the bound" at r* when its R ≤ ε_task, which
is below what the best rank-(r* − 1) model can do, whatever d, κ and the class. Training reads
ε_task (its retirement rule and the rank search), so this stage runs before training.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from entropic_bound.core.progress import report
from entropic_bound.core.rungs import parse_rung
from entropic_bound.tasks.files import load_task

#: the columns of tables/bounds.csv
COLUMNS = (
    "task_id",
    "rung",
    "r_star",
    "task_seed",
    "rank",
    "R_bound",
    "grad_norm",
    "iterations",
    "method",
)
#: config ``bounds.ranks`` (for the rungs whose deficiency a claim tests): every r < r* (``all``)
#: or the ranks the claims need most (``sparse``); the other rungs get r* − 1 only (``knee``)
RANK_MODES = ("all", "sparse", "knee")


def bound_ranks(r_star: int, mode: str) -> list[int]:
    """The ranks r < r* whose bound a task gets: all of them, r* − 1 alone (``knee``: ε_task), or
    (``sparse``) r* − 1 and r* − 2
    (ε_task and the deficiency next to the knee) and the powers of two below r* (the coarse
    curve a rank search trains)."""
    if mode not in RANK_MODES:
        raise ValueError(f"bounds.ranks {mode!r}; use one of {', '.join(RANK_MODES)}")
    if mode == "all":
        return list(range(1, r_star))
    if mode == "knee":
        return [r_star - 1] if r_star > 1 else []
    powers = {2**j for j in range(r_star.bit_length()) if 2**j < r_star}
    return sorted({r for r in (r_star - 1, r_star - 2) if r >= 1} | powers)


def tail_energy(spectrum, rank: int) -> float:
    """Eckart–Young population optimum of the surrogate: R*(r) = Σ_{k>r} s_k² / Σ s_k²."""
    e = np.asarray(spectrum, dtype=np.float64) ** 2
    return float(e[rank:].sum() / e.sum())


def epsilon_task(epsilon: float, bound_below: float, factor: float = 0.5) -> float:
    """min(ε, factor·R*_c(r* − 1)); for r* = 1 the best rank-0 model predicts 0, R*(0) = 1."""
    return min(epsilon, factor * bound_below)


def rung_bounds(cfg: dict, task_paths, progress=None) -> pd.DataFrame:
    """tables/bounds.csv rows of one rung's tasks (every rank of :func:`bound_ranks`)."""
    b = cfg["bounds"]
    # the bounds read the first n_seqs training sequences and the test split: a file without
    # data makes only those (tasks/parts.py)
    tasks = [load_task(p, train=b["n_seqs"]) for p in task_paths]
    metas = [m for _, m in tasks]
    # the rungs whose deficiency a claim tests get bounds.ranks; the others r* − 1 (ε_task)
    mode = b["ranks"] if metas and metas[0]["class"] in b["deficiency_rungs"] else "knee"
    pairs = [(i, r) for i, m in enumerate(metas) for r in bound_ranks(m["r_star"], mode)]
    if pairs and parse_rung(metas[0]["class"])[0] != "L0":
        # torch (optimise.py) only here: the L0 job computes its bounds without it
        from entropic_bound.bounds.optimise import BoundSettings, Problem, optimised_bounds

        settings = BoundSettings(b["n_seqs"], b["max_iter"], b["grad_tol"], b["chunk"])
        problems = [Problem(i, r) for i, r in pairs]
        solved = optimised_bounds(tasks, problems, settings, progress=progress)
        method = "lbfgs"
    else:  # L0: Eckart–Young, exact
        solved = [
            {"task": i, "rank": r, "grad_norm": 0.0, "iterations": 0}
            | {"R_bound": tail_energy(metas[i]["kernel_singular_values"], r)}
            for i, r in pairs
        ]
        method = "exact"
        report(progress, 1, 1)
    rows = [
        {
            "task_id": metas[x["task"]]["task_id"],
            "rung": metas[x["task"]]["class"],
            "r_star": metas[x["task"]]["r_star"],
            "task_seed": metas[x["task"]]["seed"],
            "rank": x["rank"],
            "R_bound": x["R_bound"],
            "grad_norm": x["grad_norm"],
            "iterations": x["iterations"],
            "method": method,
        }
        for x in solved
    ]
    return pd.DataFrame(rows, columns=list(COLUMNS))


def task_epsilons(
    bounds: pd.DataFrame, metas: list[dict], epsilon: float, factor: float
) -> list[float]:
    """ε_task of each task (in the order of ``metas``) from its bound at r* − 1."""
    at = {(row.task_id, int(row.rank)): float(row.R_bound) for row in bounds.itertuples()}
    out = []
    for m in metas:
        if m["r_star"] == 1:
            out.append(epsilon_task(epsilon, 1.0, factor))
            continue
        key = (m["task_id"], m["r_star"] - 1)
        if key not in at:
            raise ValueError(f"the bounds table has no R*(r* − 1) for task {m['task_id']}")
        out.append(epsilon_task(epsilon, at[key], factor))
    return out
