"""Restarts (train/restarts.py): the better of a student's runs by training loss, exact on
hand-made tables; nothing changes at restarts 0; and the spurious minimum of a d = 48 L2
student at r = r*, which one restart leaves."""

import dataclasses
import json

import numpy as np
import pandas as pd
import pytest
import torch

from entropic_bound.config.load import load_run_config
from entropic_bound.core.seeds import student_stream
from entropic_bound.tasks.grid import specs_of_rung
from entropic_bound.tasks.make import TaskSpec, make_task
from entropic_bound.train.engine import Optim, train_students
from entropic_bound.train.restarts import keep_better, train_restarting


def tables(rows, restart):
    """Engine-shaped tables: metrics (task, rank, seed, train_mse), a two-step loss curve."""
    m = pd.DataFrame(rows, columns=["task_id", "rank", "seed", "train_mse", "converged"])
    loss = pd.DataFrame(
        [(t, r, s, step, mse * step) for t, r, s, mse, _ in rows for step in (50, 100)],
        columns=["task_id", "rank", "seed", "step", "train_loss"],
    )
    return {"metrics": m.assign(restart=restart), "loss": loss.assign(restart=restart)}


def test_keep_better_by_hand():
    old = tables([("a", 1, 0, 0.5, False), ("a", 2, 0, 0.1, False), ("b", 1, 0, 0.3, False)], 0)
    # a/1 improves, a/2 ties (the earlier run stays), b/1 gets worse
    new = tables([("a", 1, 0, 0.2, True), ("a", 2, 0, 0.1, True), ("b", 1, 0, 0.4, False)], 1)
    out = keep_better(old, new)
    m = out["metrics"]
    assert m[["task_id", "rank", "seed"]].values.tolist() == [["a", 1, 0], ["a", 2, 0], ["b", 1, 0]]
    assert m["train_mse"].tolist() == [0.2, 0.1, 0.3]
    assert m["restart"].tolist() == [1, 0, 0]
    assert m["converged"].tolist() == [True, False, False]
    assert m.dtypes.equals(old["metrics"].dtypes)
    loss = out["loss"]
    assert loss[["task_id", "rank", "step"]].values.tolist() == [
        ["a", 1, 50],
        ["a", 1, 100],
        ["a", 2, 50],
        ["a", 2, 100],
        ["b", 1, 50],
        ["b", 1, 100],
    ]
    assert loss["restart"].tolist() == [1, 1, 0, 0, 0, 0]
    assert loss["train_loss"].tolist() == [10.0, 20.0, 5.0, 10.0, 15.0, 30.0]


def test_keep_better_with_nothing_better_returns_the_old_tables():
    old = tables([("a", 1, 0, 0.5, False)], 0)
    new = tables([("a", 1, 0, 0.6, False)], 1)
    assert keep_better(old, new) is old


def test_restart_zero_is_the_original_stream_and_others_differ():
    g0 = student_stream(0, "L2_r2_s0", "L2", 1)
    g = student_stream(0, "L2_r2_s0", "L2", 1, 0)
    assert torch.equal(torch.randn(4, generator=g0), torch.randn(4, generator=g))
    draws = [torch.randn(4, generator=student_stream(0, "L2_r2_s0", "L2", 1, k)) for k in range(3)]
    assert not torch.equal(draws[0], draws[1]) and not torch.equal(draws[1], draws[2])


def small_task(rung="L2", r_star=2):
    a = make_task(TaskSpec(rung=rung, r_star=r_star, seed=0, n=8, d=8, n_train=256, n_test=128))
    return a, json.loads(str(a.pop("meta")))


def test_restarts_zero_changes_nothing_bitwise():
    task = small_task()
    optim = Optim(lr=2e-2, batch=32, max_steps=200, chunk=4)
    kw = dict(init_scale=1e-2, epsilon=1e-3, device="cpu", backend="torch")
    plain = train_students([task], "L2", [1, 2, 3], [0, 1], optim, **kw)
    again = train_restarting([task], "L2", [1, 2, 3], [0, 1], optim, **kw)
    for name in plain:
        pd.testing.assert_frame_equal(plain[name], again[name], check_exact=True)


def test_only_unconverged_students_restart_and_none_gets_worse():
    task = small_task()
    kw = dict(init_scale=1e-2, epsilon=1e-3, device="cpu", backend="torch")
    optim = Optim(lr=2e-2, batch=32, max_steps=200, chunk=4)
    plain = train_students([task], "L2", [1, 2, 3], [0, 1], optim, **kw)["metrics"]
    out = train_restarting(
        [task], "L2", [1, 2, 3], [0, 1], dataclasses.replace(optim, restarts=2), **kw
    )["metrics"]
    assert len(out) == len(plain)
    assert (out["train_mse"].to_numpy() <= plain["train_mse"].to_numpy()).all()
    converged_first = plain["converged"].to_numpy(bool)
    assert (out["restart"].to_numpy()[converged_first] == 0).all()
    assert set(out["restart"]) <= {0, 1, 2}


def test_a_rank_deficient_student_is_never_restarted():
    """Registration v3's protocol restarts students with r ≥ r* only: r = 1 < r* = 2 never
    converges (its Eckart–Young plateau) and keeps its first run, bitwise."""
    task = small_task()
    kw = dict(init_scale=1e-2, epsilon=1e-3, device="cpu", backend="torch")
    optim = Optim(lr=2e-2, batch=32, max_steps=200, chunk=4)
    plain = train_students([task], "L2", [1, 2, 3], [0, 1], optim, **kw)["metrics"]
    out = train_restarting(
        [task], "L2", [1, 2, 3], [0, 1], dataclasses.replace(optim, restarts=1), **kw
    )["metrics"]
    deficient = (plain["rank"] < plain["r_star"]).to_numpy()
    assert deficient.any() and not plain["converged"].to_numpy(bool)[deficient].any()
    assert (out["restart"].to_numpy()[deficient] == 0).all()
    pd.testing.assert_frame_equal(
        out[deficient].drop(columns="restart"), plain[deficient], check_exact=True
    )


@pytest.mark.extras
def test_a_spurious_minimum_at_r_star_is_left_by_one_restart():
    """d = 48, L2, r* = 8, task seed 1, student seed 0: without a restart the student ends at
    R ≈ 8e-3 with all 8 components in use (the run of 2026-12-04); with one it reaches ε."""
    cfg = load_run_config("config/scale/d48_rerun.yaml")
    (spec,) = [s for s in specs_of_rung(cfg, "L2") if s.r_star == 8 and s.seed == 1]
    a = make_task(spec)
    task = (a, json.loads(str(a.pop("meta"))))
    from entropic_bound.config.load import class_optim

    optim = Optim.from_config(class_optim(cfg, "L2"))
    kw = dict(init_scale=cfg["train"]["init_scale"], epsilon=1e-3, device="cpu", base_seed=0)
    plain = train_students([task], "L2", [8], [0], optim, **kw)["metrics"].iloc[0]
    assert not plain["converged"] and plain["R"] > 1e-3
    assert np.count_nonzero(np.asarray(plain["spectrum"]) > 0.1) == 8
    fixed = train_restarting([task], "L2", [8], [0], dataclasses.replace(optim, restarts=1), **kw)[
        "metrics"
    ].iloc[0]
    assert fixed["converged"] and fixed["R"] < 1e-3 and fixed["restart"] == 1
