"""Stage ``tasks`` (workflow/rules/tasks.smk): write every task file of one rung."""

from __future__ import annotations

from pathlib import Path

from entropic_bound.core.io import write_npz
from entropic_bound.core.progress import report
from entropic_bound.tasks.files import task_file_arrays
from entropic_bound.tasks.grid import specs_of_rung


def write_tasks(cfg: dict, rung: str, out_dir, progress=None) -> list[Path]:
    """One file per task of the rung: with its data or with the seeds that make them, as
    ``task.store_data`` says (tasks/files.py)."""
    mode = cfg["task"].get("store_data", "auto")
    paths = []
    specs = specs_of_rung(cfg, rung)
    for spec in specs:
        path = Path(out_dir) / f"{spec.task_id}.npz"
        write_npz(path, **task_file_arrays(spec, mode))
        paths.append(path)
        report(progress, len(paths), len(specs))
    return paths
