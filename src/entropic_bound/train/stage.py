"""Stage ``train`` (workflow/rules/train.smk): one batched training job."""

from __future__ import annotations

import pandas as pd

from entropic_bound.bounds.stage import task_epsilons
from entropic_bound.tasks.files import load_task


def load_tasks(task_paths) -> list[tuple[dict, dict]]:
    """A training job's tasks, (arrays, meta) each, read once for both kinds of students (a task
    file without data makes them again: seconds a task at d >= 48, tasks/files.py)."""
    return [load_task(p) for p in task_paths]


def train_chunk(
    cfg: dict, rung: str, kind: str, tasks, progress=None, bounds=None
) -> dict[str, pd.DataFrame]:
    """Train one job's students: the rung's own class over its ranks (``kind="sweep"``: every
    rank 1…k, or the ranks a search picks when ``train.ranks: search``), or the static L0 and
    L1 students at full rank n (``kind="static"``), on ``tasks`` (:func:`load_tasks`).
    ``progress``: see engine.train_students. ``bounds``: (the bounds table of the rung, the
    ε_task factor): the sweep then retires students and searches knees at each task's
    ε_task = min(train.epsilon, factor·R*_c(r* − 1)) (docs/method.md §5b), and it returns a
    fourth table, ``factors``: the final Q, K, V of the sweep's students at the (task, rank)
    pairs of the bounds table (train/factors.py; the starts of the best-known bounds); None:
    ``train.epsilon`` for every task, no factors. The static students always use
    ``train.epsilon``."""
    import sys

    from entropic_bound.config.load import class_optim
    from entropic_bound.core.rungs import kernel_dim, parse_rung
    from entropic_bound.train.engine import Optim
    from entropic_bound.train.restarts import train_restarting
    from entropic_bound.train.search import train_by_search

    t = cfg["train"]
    epsilons = None
    if bounds is not None:
        epsilons = task_epsilons(bounds[0], [m for _, m in tasks], t["epsilon"], bounds[1])
    n, d = cfg["task"]["n"], cfg["task"]["d"]
    search = t.get("ranks", "all") == "search"
    if kind == "sweep":
        jobs = [(rung, list(range(1, kernel_dim(rung, n, d) + 1)), False)]
    elif kind == "static":
        jobs = [("L0", [n], True), ("L1", [n], True)]
    else:
        raise ValueError(f"unknown training kind {kind!r}; use sweep or static")
    parts: dict[str, list[pd.DataFrame]] = {"metrics": [], "dynamics": [], "loss": []}
    keep = None  # the (task, rank) pairs whose students' factors the bounds need
    if bounds is not None and kind == "sweep":
        keep = set(zip(bounds[0]["task_id"], bounds[0]["rank"].astype(int)))
        parts["factors"] = []
    for student_class, ranks, static in jobs:
        optim = Optim.from_config(class_optim(cfg, parse_rung(student_class)[0]))
        kw = dict(
            run_settings(cfg),
            epsilon=t["epsilon"] if static or epsilons is None else list(epsilons),
            static_student=static,
            progress=progress,
            factors=keep is not None,
        )
        if search and not static:
            out = train_by_search(
                tasks, student_class, t["student_seeds"], optim, k=ranks[-1], **kw
            )
            for row in out.pop("search").itertuples():
                print(
                    f"rank search {row.task_id}: r_emp {row.r_emp:g} after {row.rounds} rounds; "
                    f"trained ranks {row.ranks_trained}",
                    file=sys.stderr,
                )
        else:
            out = train_restarting(tasks, student_class, ranks, t["student_seeds"], optim, **kw)
        for k, v in out.items():
            parts[k].append(v)
    out = {k: pd.concat(v, ignore_index=True) for k, v in parts.items()}
    if keep is not None:
        f = out["factors"]
        wanted = [(t, int(r)) in keep for t, r in zip(f["task_id"], f["rank"])]
        out["factors"] = f[wanted].reset_index(drop=True)
    return out


def run_settings(cfg: dict) -> dict:
    """The keyword arguments of ``train_students`` that a run's config fixes for every student
    it trains (init, target, checkpoints, seed, device, backend): one place for the rank sweep,
    the static students, C8's distortion grid and the exploratory β training."""
    t = cfg["train"]
    return {
        "init_scale": t["init_scale"],
        "epsilon": t["epsilon"],
        "checkpoints": t["checkpoints"],
        "base_seed": cfg["seed"],
        "device": cfg["device"],
        "backend": t.get("backend", "auto"),
        "products": t.get("products", "auto"),
    }
