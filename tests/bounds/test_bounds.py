"""Class bounds (docs/method.md §5b): the optimiser checked against the one class whose optimum is
known exactly (L0, Eckart–Young), the rank rules by hand, ε_task, and ε_task in training."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from entropic_bound.bounds.optimise import BoundSettings, Problem, optimised_bounds
from entropic_bound.bounds.stage import bound_ranks, epsilon_task, tail_energy, task_epsilons
from entropic_bound.tasks.grid import TaskSpec
from entropic_bound.tasks.make import make_task


def _task(rung: str, r_star: int, n: int = 6, d: int = 6, n_train: int = 512, seed: int = 0):
    spec = TaskSpec(
        rung=rung,
        r_star=r_star,
        seed=seed,
        n=n,
        d=d,
        gain=1.0,
        kappa=2.0,
        beta=1.0,
        sigma=0.0,
        value_map="unknown",
        n_train=n_train,
        n_test=512,
        base_seed=0,
    )
    arrays = make_task(spec)
    meta = __import__("json").loads(str(arrays.pop("meta")))
    return arrays, meta


def test_bound_ranks_by_hand():
    assert bound_ranks(1, "all") == [] and bound_ranks(1, "sparse") == []
    assert bound_ranks(4, "all") == [1, 2, 3]
    assert bound_ranks(4, "knee") == [3]
    assert bound_ranks(32, "sparse") == [1, 2, 4, 8, 16, 30, 31]
    with pytest.raises(ValueError, match="bounds.ranks"):
        bound_ranks(4, "every")


def test_epsilon_task_by_hand():
    assert epsilon_task(1e-3, 1.0) == 1e-3  # r* = 1: the best rank-0 model has R = 1
    assert epsilon_task(1e-3, 1.2e-3) == pytest.approx(6e-4)
    bounds = pd.DataFrame({"task_id": ["a"], "rank": [2], "R_bound": [1e-3]})
    metas = [{"task_id": "a", "r_star": 3}, {"task_id": "b", "r_star": 1}]
    assert task_epsilons(bounds, metas, 1e-3, 0.5) == [pytest.approx(5e-4), 1e-3]
    with pytest.raises(ValueError, match="no R\\*\\(r\\* − 1\\) for task c"):
        task_epsilons(bounds, [{"task_id": "c", "r_star": 2}], 1e-3, 0.5)


def test_the_optimiser_finds_the_exact_l0_optimum():
    """Run through the optimiser, L0 (whose optimum is Eckart–Young's tail) lands on the tail:
    the optimiser is checked where the answer is known."""
    task = _task("L0", 4, n_train=2048)
    s = BoundSettings(n_seqs=2048, max_iter=200, grad_tol=1e-9, chunk=8)
    rows = optimised_bounds([task], [Problem(0, r) for r in (1, 2, 3)], s)
    exact = [tail_energy(task[1]["kernel_singular_values"], r) for r in (1, 2, 3)]
    got = [r["R_bound"] for r in rows]
    # the test set is a fresh sample: the large-sample optimum is within sampling error
    np.testing.assert_allclose(got, exact, rtol=0.05)
    assert all(r["grad_norm"] < 1e-4 for r in rows)


@pytest.mark.parametrize("rung", ["L3", "L4", "L1"])
def test_optimised_bounds_fall_with_rank_and_beat_the_truncated_teacher(rung):
    task = _task(rung, 4)
    s = BoundSettings(n_seqs=512, max_iter=60, grad_tol=1e-6, chunk=8)
    rows = optimised_bounds([task], [Problem(0, r) for r in (1, 2, 3)], s)
    R = [r["R_bound"] for r in rows]
    assert all(0 < x < 1 for x in R)
    assert R[0] > R[1] > R[2]
    # no iteration: the truncated teacher itself (the optimiser's start) is an upper bound
    start = optimised_bounds([task], [Problem(0, 3)], BoundSettings(512, 1, 1e-6, 8))
    assert R[2] <= start[0]["R_bound"] * (1 + 1e-9)


def test_per_task_epsilon_equal_to_the_scalar_trains_the_same_bits():
    """ε_task = ε on every task gives bitwise the students a scalar ε gives (paper scale)."""
    from entropic_bound.train.engine import Optim, train_students

    torch.manual_seed(0)
    tasks = [_task("L3", 2, n=4, d=4, n_train=256, seed=s) for s in (0, 1)]
    optim = Optim(lr=2e-2, batch=32, max_steps=100, eval_every=25)
    kw = dict(init_scale=1e-2, checkpoints=2, device="cpu", backend="torch")
    a = train_students(tasks, "L3", [2, 3], [0], optim, epsilon=1e-3, **kw)["metrics"]
    b = train_students(tasks, "L3", [2, 3], [0], optim, epsilon=[1e-3, 1e-3], **kw)["metrics"]
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    c = train_students(tasks, "L3", [2, 3], [0], optim, epsilon=[1e-3, 1e-9], **kw)["metrics"]
    # a smaller ε_task on task 1 keeps its students training at least as long
    steps = lambda m: m.set_index(["task_id", "rank"])["steps"]  # noqa: E731
    assert (steps(c).loc[tasks[1][1]["task_id"]] >= steps(a).loc[tasks[1][1]["task_id"]]).all()


def test_only_the_deficiency_rungs_get_every_rank(tmp_path):
    """L1 is not a deficiency rung: its tasks get R*(r* − 1) alone; L0 (a deficiency rung) all."""
    import json

    import numpy as np

    from entropic_bound.bounds.stage import rung_bounds

    cfg = {
        "bounds": {
            "ranks": "all",
            "deficiency_rungs": ["L0", "L3", "L4"],
            "n_seqs": 64,
            "max_iter": 2,
            "grad_tol": 1e-5,
            "chunk": 4,
        }
    }
    for rung in ("L0", "L1"):
        arrays, meta = _task(rung, 4, n=4, d=4, n_train=64)
        path = tmp_path / f"{rung}.npz"
        np.savez(path, **arrays, meta=np.array(json.dumps(meta)))
        ranks = list(rung_bounds(cfg, [path])["rank"])
        assert ranks == ([1, 2, 3] if rung == "L0" else [3]), (rung, ranks)


def test_lbfgs_without_the_dynamo_import_gives_the_same_bits_and_cleans_up():
    """``_no_dynamo_import`` skips torch._dynamo's import (a quarter of a bounds job) and changes
    no number: the bounds with and without it are equal bit for bit, and it leaves torch.optim as
    it found it."""
    from entropic_bound.bounds import optimise

    task = _task("L4", 3)
    problems, s = [Problem(0, 1), Problem(0, 2)], BoundSettings(256, 20, 1e-9, 8)
    fast = optimised_bounds([task], problems, s)
    plain = optimise._optimise  # the same L-BFGS, the import allowed
    try:
        optimise._optimise = lambda batch, s, *_: (optimise._lbfgs(batch, s), batch.grad_norms())
        slow = optimised_bounds([task], problems, s)
    finally:
        optimise._optimise = plain
    assert fast == slow
    for name in ("add_param_group", "zero_grad"):
        fn = getattr(torch.optim.Optimizer, name).__wrapped__
        assert getattr(fn, optimise._DYNAMO_CACHE, None) is not fn
