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
    cfg: dict, rung: str, kind: str, tasks, progress=None, bounds=None, sweep=None
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
    ``train.epsilon``. ``sweep``: this job's sweep tables (the same ``tasks`` and ``bounds``):
    the static student of the rung's own class (L0 on L0, L1 on L1) at rank n is then the
    sweep's student at rank n wherever that one trained to ``train.epsilon`` (its ε_task), the
    same student from the same stream (core.seeds.student_stream: no rank in its key), so its
    rows are taken, not trained again (:func:`_sweep_duplicates`)."""
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
        dup = []
        if static and not search:  # a rank search strips its tasks' teacher (search.py)
            dup = _sweep_duplicates(
                sweep, rung, student_class, ranks, tasks, epsilons, t["epsilon"]
            )
        if dup:
            rest = [i for i in range(len(tasks)) if i not in dup]
            trained = None
            if rest:
                trained = train_restarting(
                    [tasks[i] for i in rest], student_class, ranks, t["student_seeds"], optim, **kw
                )
            for k, v in _with_duplicates(sweep, dup, tasks, ranks[0], trained).items():
                parts[k].append(v)
            continue
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


def _sweep_duplicates(sweep, rung, student_class, ranks, tasks, epsilons, epsilon) -> list[int]:
    """The tasks (indices) whose static student of ``student_class`` at ``ranks`` (its one rank)
    the sweep of the same class trained to the same target (ε_task = ``epsilon``)."""
    if sweep is None or student_class != rung or len(ranks) != 1:
        return []
    eps = [epsilon] * len(tasks) if epsilons is None else list(epsilons)
    m = sweep["metrics"]
    done = set(zip(m["task_id"], m["rank"].astype(int)))
    return [
        i
        for i, (_, meta) in enumerate(tasks)
        if eps[i] == epsilon and (meta["task_id"], ranks[0]) in done
    ]


def _with_duplicates(sweep, dup, tasks, rank, trained) -> dict[str, pd.DataFrame]:
    """The static students' tables: the sweep's rows of the tasks ``dup`` at ``rank`` (marked
    static), with ``trained`` (the other tasks', or None), in the order training all gives:
    metrics by task then seed, the curves by task id, rank, seed and step."""
    ids = [tasks[i][1]["task_id"] for i in dup]
    position = {m["task_id"]: i for i, (_, m) in enumerate(tasks)}
    out = {}
    for name in ("metrics", "dynamics", "loss"):
        df = sweep[name]
        part = df[df["task_id"].isin(ids) & (df["rank"] == rank)].assign(static_student=True)
        if trained is not None:
            part = pd.concat([part, trained[name]], ignore_index=True)
        if name == "metrics":
            key = part["task_id"].map(position)
            part = part.assign(_t=key).sort_values(["_t", "seed"], kind="stable")
            part = part.drop(columns="_t")
        else:
            part = part.sort_values(["task_id", "rank", "seed", "step"], kind="stable")
        out[name] = part.reset_index(drop=True)
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
