"""A training job reads its tasks once (train/stage.py: load_tasks) for both kinds of students,
so training must leave the arrays it was given as they were read."""

from pathlib import Path

import numpy as np
import pytest

from entropic_bound.config.load import load_run_config
from entropic_bound.tasks.stage import write_tasks
from entropic_bound.train.stage import load_tasks, train_chunk

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.extras  # the checkout's config/quick.yaml
def test_both_kinds_train_on_the_tasks_as_read(tmp_path):
    cfg = load_run_config(REPO / "config" / "quick.yaml")
    paths = [p for p in write_tasks(cfg, "L3", tmp_path) if "_r2_" in p.name][:1]
    tasks = load_tasks(paths)
    read = [{k: v.copy() for k, v in arrays.items()} for arrays, _ in tasks]
    first = {kind: train_chunk(cfg, "L3", kind, tasks) for kind in ("sweep", "static")}
    assert len(first["sweep"]["metrics"]) >= 2 and len(first["static"]["metrics"]) >= 2
    for (arrays, _), before in zip(tasks, read):
        assert all(np.array_equal(arrays[k], before[k]) for k in before)
    # and each kind trains as it does on tasks read for it alone
    again = train_chunk(cfg, "L3", "static", load_tasks(paths))
    for name, df in again.items():
        assert df.equals(first["static"][name]), name
