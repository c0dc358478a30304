"""Rank search: the bisection policy on hand-made risk curves, and on trained students it
finds the sweep's knee without ever seeing r* or the teacher."""

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parents[1]))

from fabricate import fabricate, fabricate_dynamics, fabricate_loss  # noqa: E402

from entropic_bound.claims import CLAIMS, NOT_REPRODUCED, REPRODUCED  # noqa: E402
from entropic_bound.tasks.make import TaskSpec, make_task  # noqa: E402
from entropic_bound.train import fused  # noqa: E402
from entropic_bound.train.engine import Optim, train_students  # noqa: E402
from entropic_bound.train.search import (  # noqa: E402
    bisect_knees,
    blind_task,
    coarse_ranks,
    train_by_search,
)

EPS = 1e-3


def fake_round(knee_of, log):
    """A train_round whose task t has R(r) = 1 below knee_of[t] and 0 from it on."""

    def train_round(requests):
        log.append(list(requests))
        return {(t, r): (0.0 if r >= knee_of[t] else 1.0) for t, r in requests}

    return train_round


def test_coarse_ranks_by_hand():
    assert coarse_ranks(1) == [1]
    assert coarse_ranks(6) == [1, 2, 4, 6]
    assert coarse_ranks(16) == [1, 2, 4, 8, 16]
    assert coarse_ranks(64) == [1, 2, 4, 8, 16, 32, 64]


def test_bisection_by_hand():
    log = []
    (kn,) = bisect_knees(fake_round([11], log), 1, 16, EPS)
    assert kn.r_emp == 11
    # round 1 the coarse curve (8 fails, 16 passes), then 12, 10, 11, then the neighbour 12
    # is already trained
    assert log == [[(0, 1), (0, 2), (0, 4), (0, 8), (0, 16)], [(0, 12)], [(0, 10)], [(0, 11)]]
    assert sorted(kn.risk) == [1, 2, 4, 8, 10, 11, 12, 16]


def test_knee_at_a_power_of_two_trains_its_upper_neighbour():
    log = []
    (kn,) = bisect_knees(fake_round([8], log), 1, 16, EPS)
    assert kn.r_emp == 8 and {7, 8, 9} <= set(kn.risk)


def test_no_knee_when_full_rank_fails():
    log = []
    (kn,) = bisect_knees(fake_round([17], log), 1, 16, EPS)
    assert kn.r_emp is None and len(log) == 1


def test_every_round_batches_all_tasks():
    log = []
    knees = bisect_knees(fake_round([1, 5, 64, 33], log), 4, 64, EPS)
    assert [kn.r_emp for kn in knees] == [1, 5, 64, 33]
    assert {t for t, _ in log[0]} == {0, 1, 2, 3}
    assert len(log) <= 1 + math.ceil(math.log2(64)) + 1


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 80), st.data())
def test_bisection_finds_every_monotone_knee(k, data):
    knee = data.draw(st.integers(1, k + 1))
    log = []
    (kn,) = bisect_knees(fake_round([knee], log), 1, k, EPS)
    trained = set(kn.risk)
    assert set(coarse_ranks(k)) <= trained
    if knee > k:
        assert kn.r_emp is None
        return
    assert kn.r_emp == knee
    assert {r for r in (knee - 1, knee, knee + 1) if 1 <= r <= k} <= trained
    # the least trained rank that passes is the knee (what analysis.empirical_knees reads)
    assert min(r for r in trained if kn.risk[r] <= EPS) == knee
    assert len(log) <= 2 + max(1, math.ceil(math.log2(k)))
    assert len(trained) <= len(coarse_ranks(k)) + math.ceil(math.log2(k)) + 2


# ---- on trained students (fused kernel: a student trains identically in any batch) ----

FAST = Optim(lr=3e-2, batch=32, max_steps=400, eval_every=25, patience=2, lr_drops=1)


def _tasks(rung, r_stars, n=8, d=8):
    out = []
    for r in r_stars:
        a = make_task(TaskSpec(rung=rung, r_star=r, seed=0, n=n, d=d, n_train=512, n_test=256))
        out.append((a, json.loads(str(a["meta"]))))
    return out


def _blindfolded(tasks):
    """The tasks with r*, the teacher kernel, its spectrum and V removed (or garbage)."""
    out = []
    for a, m in tasks:
        a = {k: v for k, v in a.items() if k not in ("kernel", "V")}
        m = {k: v for k, v in m.items() if k not in ("r_star", "kernel_singular_values")}
        out.append((a, m))
    return out


def _knees(metrics):
    med = metrics.groupby(["task_id", "rank"])["R"].median().reset_index()
    return med[med.R <= EPS].groupby("task_id")["rank"].min().to_dict()


@pytest.mark.skipif(not fused.available(), reason="no C compiler: the fused kernel cannot build")
@pytest.mark.parametrize("rung", ["L0", "L4"])
def test_search_matches_the_sweep(rung):
    tasks = _tasks(rung, (1, 3, 6))
    kw = dict(epsilon=EPS, backend="fused", device="cpu")
    sweep = train_students(tasks, rung, list(range(1, 9)), [0, 1], FAST, **kw)
    found = train_by_search(tasks, rung, [0, 1], FAST, k=8, **kw)
    sm, fm = sweep["metrics"], found["metrics"]
    assert list(fm.columns) == list(sm.columns)
    assert found["search"].set_index("task_id").r_emp.to_dict() == {
        t: float(r) for t, r in _knees(sm).items()
    }
    assert _knees(fm) == _knees(sm)
    assert len(fm) < len(sm)
    # every searched student is the sweep's student: same rows, bitwise (fused, CPU)
    key = ["task_id", "rank", "seed"]
    both = fm.merge(sm, on=key, suffixes=("", "_sweep"))
    assert len(both) == len(fm)
    for col in ("R", "test_mse", "steps", "r_star", "R_theory"):
        np.testing.assert_array_equal(both[col], both[col + "_sweep"], err_msg=col)
    for name in ("dynamics", "loss"):
        sub = sweep[name].merge(fm[key], on=key)
        assert found[name].reset_index(drop=True).equals(sub.reset_index(drop=True)), name


@pytest.mark.skipif(not fused.available(), reason="no C compiler: the fused kernel cannot build")
def test_search_never_sees_the_teacher():
    tasks = _tasks("L0", (2, 5))
    kw = dict(epsilon=EPS, backend="fused", device="cpu")
    seen = train_by_search(tasks, "L0", [0], FAST, k=8, **kw)["search"]
    blind = train_by_search(_blindfolded(tasks), "L0", [0], FAST, k=8, **kw)
    assert blind["search"].equals(seen)
    assert blind["metrics"]["r_star"].isna().all()  # nothing to copy back: none was there
    # what the engine is handed: the data and shapes only
    a, m = blind_task(*tasks[0])
    assert "r_star" not in m and "kernel_singular_values" not in m
    assert set(a) == {"X_train", "Y_train", "X_test", "Y_test", "P"}


# ---- downstream: the claims on the sparse tables a search leaves ----


def _searched(metrics, k):
    """Keep, of each task's own-class sweep, the ranks bisect_knees would have trained."""
    own = metrics[~metrics.static_student.astype(bool)]
    med = own.groupby(["task_id", "rank"])["R"].median()
    ids = sorted(own.task_id.unique())

    def train_round(requests):
        return {(t, r): med[(ids[t], r)] for t, r in requests}

    knees = bisect_knees(train_round, len(ids), k, EPS)
    keep = {(ids[t], r) for t, kn in enumerate(knees) for r in kn.risk}
    pair = list(zip(metrics.task_id, metrics["rank"]))
    mask = metrics.static_student.astype(bool).to_numpy() | np.array([p in keep for p in pair])
    return metrics[mask].reset_index(drop=True)


@pytest.mark.parametrize("broken", [(), ("C1",), ("C7",)])
def test_claims_on_searched_ranks(broken):
    claims = yaml.safe_load((Path(__file__).parents[2] / "config" / "claims.yaml").read_text())
    tables = fabricate(broken=set(broken), r_stars=(1, 2, 4, 8), n=16, d=16)
    sparse = _searched(tables["train_metrics"], 16)
    assert len(sparse) < len(tables["train_metrics"])
    tables |= {
        "train_metrics": sparse,
        "train_dynamics": fabricate_dynamics(sparse),
        "train_loss": fabricate_loss(sparse),
    }
    for cid in ("C1", "C2", "C7"):
        row = CLAIMS[cid](tables, claims)
        want = NOT_REPRODUCED if cid in broken else REPRODUCED
        assert row["verdict"] == want, (cid, row["measured"])
        if cid in ("C1", "C7"):
            assert "rank search: tests the" in row["measured"], row["measured"]
