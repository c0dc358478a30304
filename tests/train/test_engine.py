"""The batched training engine: the Eckart–Young bound, batch independence, determinism."""

import json

import numpy as np
import pytest
import torch

from entropic_bound.tasks.make import TaskSpec, make_task
from entropic_bound.train import engine, fused
from entropic_bound.train.engine import Optim, flush_denormal_is_on, tail_energy, train_students

FAST = Optim(lr=3e-2, batch=32, max_steps=400, eval_every=25, patience=2, lr_drops=1)


@pytest.fixture(params=["fused", "torch"])
def backend(request):
    """Every engine property is checked on both CPU backends (fused C kernel and autograd)."""
    if request.param == "fused" and not fused.available():
        pytest.skip("no C compiler: the fused kernel cannot build")
    return request.param


def _tasks(rung="L0", r_stars=(2,), n=4, d=4, B=512):
    out = []
    for r in r_stars:
        a = make_task(TaskSpec(rung=rung, r_star=r, seed=0, n=n, d=d, n_train=B, n_test=256))
        out.append((a, json.loads(str(a["meta"]))))
    return out


def test_tail_energy_by_hand():
    assert tail_energy([2.0, 1.0], 1) == pytest.approx(1 / 5)
    assert tail_energy([2.0, 1.0], 2) == 0.0


def test_l0_deficiency_and_achievability(backend):
    tasks = _tasks("L0", (2,))
    m = train_students(tasks, "L0", [1, 2, 3, 4], [0], FAST, backend=backend)["metrics"].set_index(
        "rank"
    )
    assert (m.loc[[2, 3, 4], "R"] <= 1e-3).all()  # achievable at r ≥ r*
    assert m.loc[1, "R"] >= 0.5 * m.loc[1, "R_theory"] > 0  # Eckart–Young deficiency
    assert m.loc[1, "R"] == pytest.approx(m.loc[1, "R_theory"], rel=0.05)


def test_student_in_batch_equals_student_alone(backend):
    tasks = _tasks("L4", (1, 2))
    many = train_students(tasks, "L4", [1, 2, 3, 4], [0, 1], FAST, backend=backend)["metrics"]
    alone = train_students(tasks[1:], "L4", [3], [1], FAST, backend=backend)["metrics"]
    row = many[
        (many.task_id == tasks[1][1]["task_id"]) & (many["rank"] == 3) & (many.seed == 1)
    ].iloc[0]
    assert row.steps == alone.steps.iloc[0]
    assert row.test_mse == pytest.approx(alone.test_mse.iloc[0], rel=1e-5, abs=1e-9)
    np.testing.assert_allclose(row.spectrum, alone.spectrum.iloc[0], rtol=1e-5, atol=1e-7)
    if backend == "fused":  # one student per thread in a fixed order: not just close, equal
        assert row.test_mse == alone.test_mse.iloc[0]


def test_fused_results_do_not_depend_on_thread_count():
    if not fused.available():
        pytest.skip("no C compiler: the fused kernel cannot build")
    tasks = _tasks("L4", (1, 2), n=16, d=16)
    before = torch.get_num_threads()
    try:
        out = []
        for threads in (1, 2):
            torch.set_num_threads(threads)
            out.append(train_students(tasks, "L4", [1, 2, 3], [0], FAST, backend="fused"))
    finally:
        torch.set_num_threads(before)
    for k in out[0]:
        assert out[0][k].equals(out[1][k]), k


def test_bitwise_deterministic_on_cpu(backend):
    tasks = _tasks("Lam0.50", (1,))
    a = train_students(tasks, "Lam0.50", [1, 2], [0], FAST, device="cpu", backend=backend)
    b = train_students(tasks, "Lam0.50", [1, 2], [0], FAST, device="cpu", backend=backend)
    for k in a:
        assert a[k].equals(b[k]), k


def test_outputs_and_bad_ranks(backend):
    tasks = _tasks("L3", (1,))
    out = train_students(tasks, "L3", [1, 4], [0], FAST, backend=backend)
    assert set(out) == {"metrics", "dynamics", "loss"}
    assert len(out["metrics"]) == 2 and out["dynamics"].step.nunique() > 2
    assert np.isfinite(out["loss"].train_loss).all()
    with pytest.raises(ValueError, match="ranks"):
        train_students(tasks, "L3", [5], [0], FAST, backend=backend)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_cuda_matches_cpu_closely():
    tasks = _tasks("L4", (1,))
    a = train_students(tasks, "L4", [1, 2], [0], FAST, device="cpu")["metrics"]
    b = train_students(tasks, "L4", [1, 2], [0], FAST, device="cuda")["metrics"]
    np.testing.assert_allclose(a.R, b.R, rtol=0.2, atol=1e-5)


def test_diverging_training_fails_loudly(backend):
    tasks = _tasks("L4", (1,))
    with pytest.raises(ValueError, match="diverged.*L4_r1_s0"):
        train_students(
            tasks,
            "L4",
            [1, 2],
            [0],
            Optim(lr=1e30, batch=32, max_steps=50, eval_every=25),
            backend=backend,
        )


@pytest.mark.parametrize("mode", [False, True])
def test_training_leaves_the_flush_denormal_mode_as_it_found_it(mode, backend):
    """Training runs with subnormals flushed to zero and puts the caller's mode back, after a
    normal return and after a diverging run's error (it once left the mode on for the whole
    process, and later hypothesis tests could not draw floats)."""
    tasks = _tasks("L4", (1,))
    torch.set_flush_denormal(mode)
    try:
        assert flush_denormal_is_on() is mode
        train_students(tasks, "L4", [1], [0], FAST, backend=backend)
        assert flush_denormal_is_on() is mode
        diverging = Optim(lr=1e30, batch=32, max_steps=50, eval_every=25)
        with pytest.raises(ValueError, match="diverged"):
            train_students(tasks, "L4", [1], [0], diverging, backend=backend)
        assert flush_denormal_is_on() is mode
    finally:
        torch.set_flush_denormal(False)


def test_flush_denormal_is_on_reads_the_mode():
    torch.set_flush_denormal(True)
    try:
        assert flush_denormal_is_on() is True
        assert float(torch.tensor(torch.finfo(torch.float32).tiny) / 4) == 0.0
    finally:
        torch.set_flush_denormal(False)
    assert flush_denormal_is_on() is False
    assert float(torch.tensor(torch.finfo(torch.float32).tiny) / 4) > 0.0


def test_rank_mask_holds_through_training(backend):
    tasks = _tasks("L4", (2,))
    m = train_students(tasks, "L4", [1, 2], [0], FAST, backend=backend)["metrics"].set_index("rank")
    for r in (1, 2):
        s = np.asarray(m.loc[r, "spectrum"])
        assert np.all(s[r:] <= 1e-6 * s[0]), (r, s)


def test_progress_callback_reports_every_evaluation(backend):
    tasks = _tasks("L0", (2,))
    calls = []
    out = train_students(
        tasks, "L0", [1, 4], [0], FAST, backend=backend, progress=lambda *a: calls.append(a)
    )
    steps = [c[0] for c in calls]
    assert steps == sorted(steps) and all(s % FAST.eval_every == 0 for s in steps)
    assert all(c[1] == FAST.max_steps and c[3] == 2 for c in calls)
    assert calls[-1][2] == 2  # every student retired by the last call
    assert calls[-1][0] == int(out["metrics"].steps.max())


def test_explicit_rows_train_the_same_students_as_the_grid(backend):
    tasks = _tasks("L4", (1, 2))
    grid = train_students(tasks, "L4", [1, 3], [0, 1], FAST, backend=backend)["metrics"]
    rows = [(1, 1, 3), (0, 0, 1)]  # task 1 seed 1 rank 3, task 0 seed 0 rank 1 (any order)
    some = train_students(tasks, "L4", None, [0, 1], FAST, rows=rows, backend=backend)["metrics"]
    key = ["task_id", "rank", "seed"]
    both = some.merge(grid, on=key, suffixes=("", "_grid"))
    assert len(both) == 2 and list(some.task_id) == sorted(some.task_id)
    np.testing.assert_allclose(both.test_mse, both.test_mse_grid, rtol=1e-5)
    if backend == "fused":
        assert (both.test_mse == both.test_mse_grid).all()


def test_factored_products_with_the_torch_backend_say_so_and_train_dense(capsys):
    """`train.products: factored` belongs to the fused kernel; where the torch backend trains
    (device auto on a CUDA machine, or no kernel) the students are the dense ones, with a note."""
    tasks = _tasks("L3", n=8, d=8)
    opt = Optim(lr=3e-2, batch=32, max_steps=50, eval_every=25)
    kw = dict(backend="torch", device="cpu")
    dense = train_students(tasks, "L3", [1, 2], [0], opt, products="dense", **kw)["metrics"]
    assert "factored" not in capsys.readouterr().err
    engine._NOTED.clear()
    fact = train_students(tasks, "L3", [1, 2], [0], opt, products="factored", **kw)["metrics"]
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "train.products: factored is the fused CPU kernel's" in err
    assert dense.drop(columns="spectrum").equals(fact.drop(columns="spectrum"))
    train_students(tasks, "L3", [1], [0], opt, products="factored", **kw)  # a search's next round
    assert capsys.readouterr().err == ""  # said once
