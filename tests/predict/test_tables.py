"""The predict stage as one job per random stream: the jobs' spectra merged (predict/tables.py)
are bitwise the one job's, in the run's task order, and a merge that would lose or double a
task is refused; the tasks of one stream are those that share X (tasks/grid.py)."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from entropic_bound.config.load import load_run_config
from entropic_bound.predict.stage import data_only_spectra
from entropic_bound.predict.tables import merged_spectra, predictions_of
from entropic_bound.tasks.files import load_task
from entropic_bound.tasks.grid import specs_by_stream, task_specs
from entropic_bound.tasks.stage import write_tasks

#: the checkout's configs, named from here: the installed wheel (make test-install) has no
#: config/ of its own, so the base is passed rather than found beside the package
CONFIG = Path(__file__).resolve().parents[2] / "config"


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """A grid of 2 r* × 2 seeds × 4 rungs at n = d = 4, its task files, and the one job's spectra."""
    cfg = load_run_config(CONFIG / "quick.yaml", base=CONFIG / "config.yaml")
    cfg["task"] = {**cfg["task"], "n": 4, "d": 4, "n_train": 64, "n_test": 8, "r_star": [1, 2]}
    cfg["task"].update(seeds=[0, 1], rungs=["L0", "L2", "L4"], lambdas=[0.5])
    folder = tmp_path_factory.mktemp("tasks")
    paths = {p.stem: p for p in write_tasks(cfg, None, folder)}
    ids = [s.task_id for s in task_specs(cfg)]
    return cfg, paths, ids, data_only_spectra(cfg, [paths[t] for t in ids])


def _bitwise_equal(a: pd.DataFrame, b: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(
        a.drop(columns="spectrum"), b.drop(columns="spectrum"), check_exact=True
    )
    for x, y in zip(a["spectrum"], b["spectrum"]):
        assert x.dtype == y.dtype and x.tobytes() == y.tobytes()


def test_streams_group_the_tasks_that_share_x(small):
    """One group per (r*, seed), named r{r*}_s{seed}, every task once, in task order; the tasks of
    a group share X (n = d: every rung), those of two groups do not."""
    cfg, paths, ids, _ = small
    groups = specs_by_stream(cfg)
    assert list(groups) == ["r1_s0", "r1_s1", "r2_s0", "r2_s1"]
    assert sorted(s.task_id for g in groups.values() for s in g) == sorted(ids)
    for name, specs in groups.items():
        assert [s.rung for s in specs] == ["L0", "L2", "L4", "Lam0.50"]
        assert {f"r{s.r_star}_s{s.seed}" for s in specs} == {name}
        X = [load_task(paths[s.task_id])[0]["X_train"] for s in specs]
        assert all(np.array_equal(X[0], x) for x in X[1:])
    a, b = (load_task(paths[groups[g][0].task_id])[0]["X_train"] for g in ("r1_s0", "r1_s1"))
    assert not np.array_equal(a, b)


def test_one_job_per_stream_merges_to_the_one_jobs_table_bitwise(small):
    """Each stream's job alone, the parts merged in any order: the one job's spectra, bit for bit,
    and so its predictions."""
    cfg, paths, ids, whole = small
    parts = [
        data_only_spectra(cfg, [paths[s.task_id] for s in specs])
        for specs in specs_by_stream(cfg).values()
    ]
    for order in (parts, parts[::-1]):
        merged = merged_spectra(order, ids)
        _bitwise_equal(merged, whole)
        pd.testing.assert_frame_equal(
            predictions_of(cfg, merged), predictions_of(cfg, whole), check_exact=True
        )


def test_a_task_missing_unknown_or_in_two_parts_is_refused(small):
    cfg, paths, ids, whole = small
    first, rest = whole[whole["task_id"] == ids[0]], whole[whole["task_id"] != ids[0]]
    with pytest.raises(ValueError, match=f"no spectra of {ids[0]}"):
        merged_spectra([rest], ids)
    with pytest.raises(ValueError, match="are not the run's"):
        merged_spectra([whole], ids[1:])
    with pytest.raises(ValueError, match=f"the spectra of {ids[0]} come from two jobs"):
        merged_spectra([whole, first], ids)
    with pytest.raises(ValueError, match="named twice"):
        merged_spectra([whole], [*ids, ids[0]])
