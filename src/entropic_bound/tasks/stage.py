"""Stage ``tasks`` (workflow/rules/tasks.smk): write every task file of one rung."""

from __future__ import annotations

from pathlib import Path

from entropic_bound.core.io import write_npz
from entropic_bound.core.progress import report
from entropic_bound.tasks.grid import specs_of_rung
from entropic_bound.tasks.make import make_task


def write_tasks(cfg: dict, rung: str, out_dir, progress=None) -> list[Path]:
    paths = []
    specs = specs_of_rung(cfg, rung)
    for spec in specs:
        path = Path(out_dir) / f"{spec.task_id}.npz"
        write_npz(path, **make_task(spec))
        paths.append(path)
        report(progress, len(paths), len(specs))
    return paths
