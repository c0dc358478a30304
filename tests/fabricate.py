"""Fabricated cached tables for the tests: the planted inputs of the library
(:mod:`entropic_bound.claims.planted`, which the controls table reads too), and writing them
with the pipeline's file names."""

from __future__ import annotations

import pandas as pd

from entropic_bound.claims.planted import *  # noqa: F403
from entropic_bound.claims.planted import (  # noqa: F401  the names tests import by name
    ALL_RUNGS,
    ESTIMATORS,
    OFFSET,
    fabricate,
    fabricate_dynamics,
    fabricate_frontier,
    fabricate_loss,
    fabricate_metrics,
    fabricate_predictions,
    tail_energy,
    teacher_spectrum,
)

FILES = {
    "data_only_predictions": "data_only_predictions.csv",
    "frontier": "frontier.csv",
    "train_metrics": "train_metrics.parquet",
    "train_dynamics": "train_dynamics.parquet",
    "train_loss": "train_loss.parquet",
}


def write_tables(tables: dict[str, pd.DataFrame], directory) -> None:
    """Write the tables under ``directory`` with the pipeline's file names."""
    from pathlib import Path

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    for name, df in tables.items():
        path = directory / FILES[name]
        df.to_parquet(path, index=False) if path.suffix == ".parquet" else df.to_csv(
            path, index=False
        )


def task_file_without_data(path, spec, **change):
    """A task file of ``spec`` as the tasks stage writes it without its data (store_data:
    never), with members changed: a value replaces the member, None removes it. Returns path."""
    from entropic_bound.core.io import write_npz
    from entropic_bound.tasks.files import task_file_arrays

    arrays = task_file_arrays(spec, "never")
    for key, value in change.items():
        if value is None:
            del arrays[key]
        else:
            arrays[key] = value
    write_npz(path, **arrays)
    return path
