"""Stage ``tasks`` (workflow/rules/tasks.smk): write the task files of the run, or of one rung."""

from __future__ import annotations

from pathlib import Path

from entropic_bound.core.io import write_npz
from entropic_bound.core.progress import report
from entropic_bound.tasks.files import task_file_arrays
from entropic_bound.tasks.grid import specs_of_rung, task_specs


def write_tasks(cfg: dict, rung: str | None, out_dir, progress=None) -> list[Path]:
    """One file per task of the rung (every task of the config when ``rung`` is None): with
    its data or with the seeds that make them, as ``task.store_data`` says (tasks/files.py)."""
    mode = cfg["task"].get("store_data", "auto")
    specs = task_specs(cfg) if rung is None else specs_of_rung(cfg, rung)
    paths = [Path(out_dir) / f"{spec.task_id}.npz" for spec in specs]
    # made (r*, seed) by (r*, seed): the rungs of one stream share its inputs, drawn once
    # (tasks/data.py); the paths are returned in the config's order
    order = sorted(range(len(specs)), key=lambda i: (specs[i].r_star, specs[i].seed))
    for done, i in enumerate(order, 1):
        write_npz(paths[i], **task_file_arrays(specs[i], mode))
        report(progress, done, len(specs))
    return paths
