"""The predict stage's tables from its jobs' spectra, torch-free: the spectra of every job in one
table (:func:`merged_spectra`) and the predictions read from them (:func:`predictions_of`).

The stage runs as one job per random stream at d ≥ 32 (tasks/grid.py's
:func:`~entropic_bound.tasks.grid.specs_by_stream`: the tasks that share X), each writing the
spectra of its tasks (:func:`~entropic_bound.predict.stage.data_only_spectra`); the merge needs
no torch, so the job that writes ``tables/data_only_predictions.csv`` does not pay its import.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from entropic_bound.core.estimators import estimates_long
from entropic_bound.core.tables import PREDICTION_COLUMNS


def predictions_of(cfg: dict, spectra: pd.DataFrame) -> pd.DataFrame:
    """The data-only predictions table: every estimator of ``predict`` on each row's spectrum
    (a :func:`~entropic_bound.predict.stage.data_only_spectra` table)."""
    p = cfg["predict"]
    keys = spectra.drop(columns="spectrum")
    out = estimates_long(keys, list(spectra["spectrum"]), taus=p["taus"], tol=p["tol"])
    return out[list(PREDICTION_COLUMNS)]


def merged_spectra(parts, task_ids) -> pd.DataFrame:
    """The spectra tables of the predict jobs (``parts``) as one, its tasks in the order of
    ``task_ids`` and each task's rows in its job's order: the table that one job over every task,
    in that order, writes (a task's rows do not depend on which other tasks share its job).
    ValueError when a task is missing, not in ``task_ids``, or in two parts."""
    parts = list(parts)
    position = {t: i for i, t in enumerate(task_ids)}
    if len(position) != len(task_ids):
        raise ValueError("predict: a task is named twice in the run's task list")
    seen: set = set()
    for part in parts:
        ids = set(part["task_id"])
        if ids & seen:
            twice = ", ".join(sorted(ids & seen))
            raise ValueError(f"predict: the spectra of {twice} come from two jobs")
        seen |= ids
    unknown = sorted(seen - set(position))
    missing = [t for t in task_ids if t not in seen]
    if unknown or missing:
        what = [f"tasks {', '.join(unknown)} are not the run's"] if unknown else []
        what += [f"no spectra of {', '.join(missing)}"] if missing else []
        raise ValueError(
            f"predict: the jobs' spectra do not match the run's tasks ({'; '.join(what)})"
        )
    table = pd.concat(parts, ignore_index=True)
    order = np.argsort(table["task_id"].map(position).to_numpy(), kind="stable")
    return table.iloc[order].reset_index(drop=True)
