"""The static student of a rung's own class at rank n is the sweep's full-rank student wherever
both train to train.epsilon: a job takes its rows from the sweep instead of training it again,
and its tables are those of training it (train/stage.py: ``train_chunk(..., sweep=...)``)."""

from pathlib import Path

import pandas as pd
import pytest

import entropic_bound.train.restarts as restarts
import entropic_bound.train.stage as stage
from entropic_bound.config.load import load_run_config
from entropic_bound.tasks.stage import write_tasks
from entropic_bound.train.stage import load_tasks, train_chunk

REPO = Path(__file__).resolve().parents[2]


def _counting(monkeypatch) -> list:
    """Record the (class, tasks) of every training the stage starts."""
    calls, real = [], restarts.train_restarting

    def counted(tasks, student_class, *args, **kwargs):
        calls.append((student_class, [m["task_id"] for _, m in tasks]))
        return real(tasks, student_class, *args, **kwargs)

    monkeypatch.setattr(restarts, "train_restarting", counted)
    return calls


@pytest.fixture(scope="module")
def quick_tasks(tmp_path_factory):
    cfg = load_run_config(REPO / "config" / "quick.yaml")
    paths = write_tasks(cfg, "L0", tmp_path_factory.mktemp("tasks"))
    return cfg, load_tasks(paths)


@pytest.mark.extras  # the checkout's config/quick.yaml
@pytest.mark.parametrize("lower", [None, 1])  # every task at train.epsilon; one task below it
def test_the_static_tables_are_those_of_training_them(quick_tasks, monkeypatch, lower):
    cfg, tasks = quick_tasks
    bounds = None
    if lower is not None:  # the task at index `lower` gets an ε_task below train.epsilon
        eps = cfg["train"]["epsilon"]
        wanted = [eps / 2 if i == lower else eps for i in range(len(tasks))]
        monkeypatch.setattr(stage, "task_epsilons", lambda *a: list(wanted))
        bounds = (pd.DataFrame({"task_id": [], "rank": []}), 0.5)
    sweep = train_chunk(cfg, "L0", "sweep", tasks, bounds=bounds)
    sweep.pop("factors", None)
    trained = train_chunk(cfg, "L0", "static", tasks, bounds=bounds)
    calls = _counting(monkeypatch)
    reused = train_chunk(cfg, "L0", "static", tasks, bounds=bounds, sweep=sweep)
    for name, df in trained.items():
        pd.testing.assert_frame_equal(reused[name], df, check_exact=True)
    # the L0 students are the sweep's but for the task below train.epsilon; L1's are trained
    ids = [m["task_id"] for _, m in tasks]
    l0 = [t for c, ts in calls if c == "L0" for t in ts]
    assert l0 == ([] if lower is None else [ids[lower]])
    assert [t for c, ts in calls if c == "L1" for t in ts] == ids
