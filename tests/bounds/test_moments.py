"""The static rungs' training risk from the sample's moments (bounds/moments.py): the product
route (chunked moments in float64, two matrix products a risk) against the einsum route and the
sample itself, at any chunk size; a best-bounds job holds moments, not samples; the einsum route
stays where the paper's tables were made."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from test_best import _cfg, _files

from entropic_bound.bounds import moments as mom
from entropic_bound.bounds.best import _loaded, rung_best_bounds
from entropic_bound.bounds.moments import (
    MomentBatch,
    chunked_moments,
    moments_route,
    sample_moments,
    task_moments,
    with_moments,
)
from entropic_bound.bounds.optimise import BoundSettings, Problem, _Batch, optimised_bounds
from entropic_bound.bounds.stage import rung_bounds
from entropic_bound.bounds.starts import random_start
from entropic_bound.tasks.grid import TaskSpec
from entropic_bound.tasks.make import make_task


def _task(rung="L1", r_star=3, n=6, d=5, n_train=300, sigma=0.1, beta=1.0):
    spec = TaskSpec(rung, r_star, 0, n=n, d=d, n_train=n_train, n_test=32, sigma=sigma, beta=beta)
    a = make_task(spec)
    return a, json.loads(str(a.pop("meta")))


def test_the_route_is_einsum_up_to_the_paper_configs_size():
    """quick (n·d = 64) and the paper (256) keep the route their tables were made with."""
    assert moments_route(8, 8) == moments_route(16, 16) == "einsum"
    assert moments_route(32, 32) == moments_route(64, 64) == moments_route(17, 16) == "products"


@settings(max_examples=20, deadline=None)
@given(rows=st.integers(1, 400), B=st.integers(1, 120))
def test_chunked_moments_are_the_one_products_in_the_product_layout(rows, B):
    """G and C of any chunking equal the one product's, permuted ([(b, c), (j, l)] and
    [(a, b), (j, m)]), to float64 rounding; the float32 sample is widened as it is read."""
    gen = torch.Generator().manual_seed(B)
    n, d = 3, 4
    X = torch.randn(B, n, d, generator=gen).numpy()  # float32, as a task file holds
    Y = torch.randn(B, n, d, generator=gen).numpy()
    G, C, y2 = sample_moments(X, Y)
    m = chunked_moments(X, Y, rows=rows)
    assert m.route == "products" and m.G.shape == m.C.shape == (n * n, d * d)
    torch.testing.assert_close(
        m.G, G.permute(0, 2, 1, 3).reshape(n * n, d * d), rtol=1e-13, atol=1e-14
    )
    torch.testing.assert_close(
        m.C, C.permute(2, 0, 1, 3).reshape(n * n, d * d), rtol=1e-13, atol=1e-14
    )
    torch.testing.assert_close(m.y2, y2, rtol=1e-13, atol=0)


@pytest.mark.parametrize("rung", ["L0", "L1", "L2"])
def test_the_product_route_gives_the_samples_own_risk_and_gradient(rung, monkeypatch):
    """Both routes' risks and gradients equal those summed over the sample (n ≠ d, σ > 0)."""
    arrays, meta = _task(rung)
    problems = [Problem(0, 2), Problem(0, 3, random_start(meta, 3, 0, 0))]

    def risk_and_grad(batch):
        R = batch.risks()
        return R.detach().numpy(), [g.numpy() for g in torch.autograd.grad(R.sum(), batch.params())]

    direct = risk_and_grad(_Batch([(arrays, meta)], problems, None))
    einsum = MomentBatch([(arrays, meta)], problems, None)
    assert einsum.moments[0].route == "einsum"
    monkeypatch.setattr(mom, "MOMENTS_EINSUM_MAX_ND", 0)
    products = MomentBatch([(arrays, meta)], problems, None)
    assert products.moments[0].route == "products"
    for batch in (einsum, products):
        R, grads = risk_and_grad(batch)
        np.testing.assert_allclose(R, direct[0], rtol=1e-10)
        for g, want in zip(grads, direct[1]):
            np.testing.assert_allclose(g, want, rtol=1e-7, atol=1e-12)


def test_a_batch_reads_the_moments_a_task_holds_and_no_sample():
    """with_moments drops the training split; the batch takes the held moments as they are
    (the same object) when every sequence is read, and a task's first n_seqs otherwise."""
    arrays, meta = _task()
    held = with_moments(arrays)
    assert "X_train" not in held and "Y_train" not in held
    assert set(arrays) - {"X_train", "Y_train"} <= set(held)
    batch = MomentBatch([(held, meta)], [Problem(0, 2)], None)
    assert batch.moments[0] is held["moments"]
    few = MomentBatch([(arrays, meta)], [Problem(0, 2)], 50).moments[0]
    want = task_moments({k: arrays[k][:50] for k in ("X_train", "Y_train")})
    assert torch.equal(few.G, want.G) and torch.equal(few.C, want.C)


def test_a_static_job_holds_moments_only_where_a_problem_is_posed(tmp_path):
    """_loaded: the moments in place of the sample for a task with a problem, no sample at all
    for one without (r* = 1 at the knee), the sample as it is for an input-dependent rung."""
    path = _files(tmp_path, "L1", (1,))[0]
    posed, _ = _loaded(path, True, True, {"L1_r1_s0"})
    idle, _ = _loaded(path, True, True, set())
    assert "moments" in posed and "X_train" not in posed
    assert "moments" not in idle and "X_train" not in idle and "X_test" in idle
    whole, _ = _loaded(_files(tmp_path, "L3", (1,))[0], True, False, {"L3_r1_s0"})
    assert "X_train" in whole and "moments" not in whole


def test_moments_made_once_per_task_give_the_per_batch_moments_bits():
    """The einsum route's L-BFGS rows from moments held per task (with_moments, as a job now
    reads them) are bitwise those from each batch's own moments of the whole sample (as a job
    read them before): the same floats, made once."""
    tasks = [_task("L1", r, n=4, d=4, n_train=128) for r in (2, 3)]
    problems = [Problem(i, r) for i in range(2) for r in (1, 2)]
    s = BoundSettings(None, 20, 1e-9, 3)  # chunks of 3: a task's problems in two batches
    before = optimised_bounds(tasks, problems, s, keep_best=True, batch=MomentBatch)
    held = [(with_moments(a), m) for a, m in tasks]
    assert held[0][0]["moments"].route == "einsum"
    after = optimised_bounds(held, problems, s, keep_best=True, batch=MomentBatch)
    assert before == after


@pytest.mark.parametrize("sigma, rtol", [(0.1, 1e-6), (0.0, 1e-4)])
def test_the_routes_best_bounds_agree(tmp_path, monkeypatch, sigma, rtol):
    """rung_best_bounds of a static rung by either route: the same rows to L-BFGS's tolerance
    (its steps see risks that differ in the last bits). At σ = 0 the product route's targets
    are the teacher's M X V, not their float32 rounding: five L-BFGS steps, far from converged,
    then end 2e-5 apart (relative) instead of 1e-6."""
    cfg = _cfg(routes=["teacher", "random"], ranks="all")
    paths = _files(tmp_path, "L1", sigma=sigma)
    v2 = rung_bounds(cfg, paths)
    einsum = rung_best_bounds(cfg, "L1", paths, v2)
    monkeypatch.setattr(mom, "MOMENTS_EINSUM_MAX_ND", 0)
    products = rung_best_bounds(cfg, "L1", paths, v2)
    cols = ["R_lbfgs_teacher", "R_lbfgs_random", "R_best"]
    np.testing.assert_allclose(products[cols], einsum[cols], rtol=rtol)


@pytest.mark.parametrize("rung, beta", [("L0", 1.0), ("L1", 1.0), ("L2", 1.0), ("L2", 2.5)])
def test_a_noise_free_tasks_moments_come_from_its_teacher(rung, beta, monkeypatch):
    """On the product route at σ = 0, G is the sample's (bitwise), and C and mean ‖Y‖² from G and
    the teacher are the moments of M X V (to float64 rounding), which the stored float32 Y
    differs from by its rounding alone."""
    monkeypatch.setattr(mom, "MOMENTS_EINSUM_MAX_ND", 0)
    arrays, meta = _task(rung, sigma=0.0, beta=beta)
    from entropic_bound.tasks.mixing import apply_operator

    w = {k: torch.as_tensor(arrays[k], dtype=torch.float64) for k in ("kernel", "V", "P")}
    X = torch.as_tensor(arrays["X_train"], dtype=torch.float64)
    Y = apply_operator(rung, X, w["kernel"], w["V"], beta=meta["beta"], P=w["P"])
    exact = chunked_moments(X, Y)
    sample = chunked_moments(arrays["X_train"], arrays["Y_train"])
    got = task_moments(arrays, meta)
    assert torch.equal(got.G, sample.G)
    torch.testing.assert_close(got.C, exact.C, rtol=1e-12, atol=1e-14)
    torch.testing.assert_close(got.y2, exact.y2, rtol=1e-12, atol=0)
    torch.testing.assert_close(got.C, sample.C, rtol=1e-6, atol=1e-7)
    # a planted wrong teacher (V transposed) is far from the sample: the check can fail
    wrong = task_moments({**arrays, "V": arrays["V"].T.copy()}, meta)
    assert float((wrong.C - sample.C).abs().max()) > 1e-2 * float(sample.C.abs().max())


def test_a_noisy_task_and_the_einsum_route_keep_the_samples_moments(monkeypatch):
    """σ > 0 (Y reads E) or no meta: the sample's own X ᵀY, bitwise; the einsum route always."""
    noisy, meta = _task("L1", sigma=0.1)
    clean, meta0 = _task("L1", sigma=0.0)
    for a, m in ((clean, meta0), (noisy, meta)):
        want = sample_moments(a["X_train"], a["Y_train"])
        got = task_moments(a, m)
        assert got.route == "einsum" and torch.equal(got.C, want[1])
    monkeypatch.setattr(mom, "MOMENTS_EINSUM_MAX_ND", 0)
    want = chunked_moments(noisy["X_train"], noisy["Y_train"])
    for m in (meta, None):
        got = task_moments(noisy, m)
        assert torch.equal(got.C, want.C) and torch.equal(got.y2, want.y2)


def test_a_static_best_bounds_job_reads_its_teachers_moments(tmp_path, monkeypatch):
    """_loaded hands the task's meta on: at σ = 0 on the product route the job's moments are the
    teacher's (the route is taken), with σ > 0 the sample's."""
    monkeypatch.setattr(mom, "MOMENTS_EINSUM_MAX_ND", 0)
    calls = []
    real = mom.teacher_moments
    monkeypatch.setattr(mom, "teacher_moments", lambda *a: calls.append(1) or real(*a))
    for sigma, want in ((0.0, [1]), (0.1, [])):
        calls.clear()
        (tmp_path / str(sigma)).mkdir()
        path = _files(tmp_path / str(sigma), "L1", (2,), sigma=sigma)[0]
        posed, _ = _loaded(path, True, True, {"L1_r2_s0"})
        assert posed["moments"].route == "products" and calls == want
