"""The fused CPU kernel (entropic_bound.fused): by hand, against autograd, and its failure modes."""

import json

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from entropic_bound import fused
from entropic_bound.engine import Optim, pick_backend, train_students
from entropic_bound.mixing import (
    apply_operator,
    mixing_operator,
    operator_terms,
    operator_terms_adjoint,
)
from entropic_bound.tasks import TaskSpec, make_task

RUNGS = ["L0", "L1", "L2", "L3", "L4", "Lam0.25"]
needs_kernel = pytest.mark.skipif(
    not fused.available(), reason="no C compiler: the fused kernel cannot build"
)


def _autograd(rung, X, Y, rows, kern, V, beta, P):
    kern = kern.clone().requires_grad_(True)
    V = V.clone().requires_grad_(True)
    pred = apply_operator(rung, X[rows], kern[:, None], V[:, None], beta=beta, P=P[:, None])
    loss = (pred - Y[rows]).pow(2).mean((1, 2, 3))
    return (loss.detach(), *torch.autograd.grad(loss.sum(), [kern, V]))


def _fused(rung, X, Y, rows, kern, V, beta, P, threads=1):
    kern = kern.clone().requires_grad_(True)
    n, d = X.shape[-2:]
    A, bias, softmax = operator_terms(rung, kern, n=n, d=d, beta=beta, P=P)
    loss, dA, dbias, dV = fused.fused_step(X, Y, rows, A, bias, V, softmax, threads=threads)
    outs = [t for t in (A, bias) if t is not None]
    (dk,) = torch.autograd.grad(outs, [kern], [g for g in (dA, dbias) if g is not None])
    return loss, dk, dV


def _problem(rung, n, d, S=5, B=6, R=40, seed=0, scale=0.5):
    g = torch.Generator().manual_seed(seed)
    k = n if rung in ("L0", "L1") else d
    X, Y = torch.randn(R, n, d, generator=g), torch.randn(R, n, d, generator=g)
    rows = torch.randint(R, (S, B), generator=g)
    kern = scale * torch.randn(S, k, k, generator=g)
    V = scale * torch.randn(S, d, d, generator=g)
    P = torch.randn(S, n, d, generator=g)
    return X, Y, rows, kern, V, P


def _rel(a, b):
    return float((a.double() - b.double()).abs().max() / b.double().abs().max().clamp_min(1e-30))


def test_operator_terms_equal_mixing_operator():
    for rung in RUNGS:
        X, _, _, K, _, P = _problem(rung, 6, 5)
        A, bias, softmax = operator_terms(rung, K, n=6, d=5, beta=1.7, P=P)
        Xs = X[:5]
        Z = (bias if bias is not None else 0) + (
            Xs @ A @ Xs.transpose(-1, -2) if A is not None else 0
        )
        M = torch.softmax(Z, -1) if softmax else Z
        ref = mixing_operator(rung, Xs, K, beta=1.7, P=P)
        torch.testing.assert_close(M, ref.expand_as(M), rtol=1e-5, atol=1e-6)


def test_operator_terms_adjoint_is_their_gradient():
    """In float64, so that the comparison tests the algebra, not float32 rounding."""
    g = torch.Generator().manual_seed(4)
    for rung in RUNGS:
        _, _, _, K, _, P = _problem(rung, 6, 5, seed=3)
        K, P = K.double().requires_grad_(True), P.double()
        A, bias, _ = operator_terms(rung, K, n=6, d=5, beta=1.7, P=P)
        gA = torch.randn(A.shape, generator=g, dtype=torch.float64) if A is not None else None
        gb = torch.randn(bias.shape, generator=g, dtype=torch.float64) if bias is not None else None
        outs = [t for t in (A, bias) if t is not None]
        (ref,) = torch.autograd.grad(outs, [K], [t for t in (gA, gb) if t is not None])
        got = operator_terms_adjoint(rung, gA, gb, n=6, d=5, beta=1.7, P=P)
        torch.testing.assert_close(got, ref, rtol=1e-12, atol=1e-12)


@needs_kernel
def test_by_hand():
    """n = 2, d = 1, a zero static logit matrix under softmax: M = ½·11ᵀ (solved on paper)."""
    X = torch.tensor([[[1.0], [2.0]]])
    Y = torch.tensor([[[3.0], [1.0]]])
    loss, dA, dbias, dV = fused.fused_step(
        X,
        Y,
        torch.zeros(1, 1, dtype=torch.int64),
        None,
        torch.zeros(1, 2, 2),
        torch.tensor([[[2.0]]]),
        True,
    )
    # H = M x = [1.5, 1.5], Ŷ = 2H = [3, 3], E = [0, 2]: loss = (0 + 4)/2 = 2
    assert loss.tolist() == [2.0] and dA is None
    # G = 2E/2 = E; dV = Hᵀ G = 1.5·2 = 3
    assert dV.tolist() == [[[3.0]]]
    # dM = (G Vᵀ) xᵀ = [[0, 0], [4, 8]]; row 2: ½·([4, 8] − 6) = [−1, 1]
    assert dbias.tolist() == [[[0.0, 0.0], [-1.0, 1.0]]]
    loss, *_ = fused.fused_step(
        X,
        Y,
        torch.zeros(1, 1, dtype=torch.int64),
        None,
        torch.zeros(1, 2, 2),
        torch.tensor([[[2.0]]]),
        True,
        backward=False,
    )
    assert loss.tolist() == [2.0]


@needs_kernel
# (8, 24), (24, 40), (64, 64): every tiling of the products (6 × 2 and 4 × 2 row tiles, a last
# block of 8 columns, block transposes) at the vector width of 8 floats as well as 16
@pytest.mark.parametrize(
    "n,d", [(16, 16), (32, 16), (16, 32), (4, 4), (5, 3), (8, 24), (24, 40), (64, 64)]
)
@pytest.mark.parametrize("rung", RUNGS)
def test_matches_autograd(rung, n, d):
    args = _problem(rung, n, d)
    ref = _autograd(rung, *args[:-1], beta=1.3, P=args[-1])
    got = _fused(rung, *args[:-1], beta=1.3, P=args[-1])
    for a, b in zip(got, ref):
        assert _rel(a, b) < 5e-6


@needs_kernel
@settings(max_examples=30, deadline=None)
@given(
    rung=st.sampled_from(RUNGS),
    n=st.integers(1, 20),
    d=st.integers(1, 18),
    B=st.integers(1, 9),
    seed=st.integers(0, 10**6),
    scale=st.floats(0.01, 2.0),
)
def test_matches_autograd_property(rung, n, d, B, seed, scale):
    args = _problem(rung, n, d, S=3, B=B, seed=seed, scale=scale)
    ref = _autograd(rung, *args[:-1], beta=0.9, P=args[-1])
    got = _fused(rung, *args[:-1], beta=0.9, P=args[-1])
    for a, b in zip(got, ref):
        assert _rel(a, b) < 1e-4


@needs_kernel
def test_result_does_not_depend_on_thread_count_or_batch():
    args = _problem("L4", 16, 16, S=7, B=9)
    one = _fused("L4", *args[:-1], beta=1.0, P=args[-1], threads=1)
    two = _fused("L4", *args[:-1], beta=1.0, P=args[-1], threads=2)
    X, Y, rows, kern, V, P = args
    alone = _fused("L4", X, Y, rows[3:4], kern[3:4], V[3:4], beta=1.0, P=P[3:4])
    for a, b, c in zip(one, two, alone):
        assert torch.equal(a, b) and torch.equal(a[3:4], c)


@needs_kernel
def test_bad_input():
    X, Y, rows, kern, V, P = _problem("L4", 4, 4)
    with pytest.raises(ValueError, match="out of range"):
        fused.fused_step(X, Y, rows + 1000, kern, None, V, True)
    with pytest.raises(ValueError, match="A must have shape"):
        fused.fused_step(X, Y, rows, kern[:, :3], None, V, True)
    with pytest.raises(ValueError, match="needs A, bias"):
        fused.fused_step(X, Y, rows, None, None, V, True)
    bad = kern.clone()
    bad[2, 0, 0] = float("nan")
    loss = fused.fused_step(X, Y, rows, bad, None, V, True)[0]
    assert torch.isnan(loss[2]) and torch.isfinite(loss[[0, 1, 3, 4]]).all()


@needs_kernel
def test_adam_step_matches_the_torch_update():
    g = torch.Generator().manual_seed(1)
    W, G = torch.randn(5, 7, generator=g), torch.randn(5, 7, generator=g)
    G[:, 6] = 0.0  # a masked column: no gradient, so no step
    m1, m2 = torch.randn(5, 7, generator=g), torch.rand(5, 7, generator=g)
    lr = torch.tensor([1e-2, 2e-2, 3e-2, 0.0, 1.0])
    b1, b2, c1, c2, eps = 0.9, 0.999, 0.19, 0.002, 1e-8
    ref_m1 = m1 * b1 + (1 - b1) * G
    ref_m2 = m2 * b2 + (1 - b2) * G * G
    ref_W = W - lr[:, None] * (ref_m1 / c1) / ((ref_m2 / c2).sqrt() + eps)
    fused.adam_step(W, G, m1, m2, lr, b1, b2, c1, c2, eps)
    for got, ref in ((m1, ref_m1), (m2, ref_m2), (W, ref_W)):
        torch.testing.assert_close(got, ref, rtol=2e-6, atol=1e-7)
    with pytest.raises(ValueError, match="contiguous float32"):
        fused.adam_step(W.t(), G, m1, m2, lr, b1, b2, c1, c2, eps)


def _tasks(rung, n=4, d=4):
    a = make_task(TaskSpec(rung=rung, r_star=1, seed=0, n=n, d=d, n_train=256, n_test=128))
    return [(a, json.loads(str(a["meta"])))]


@needs_kernel
@pytest.mark.parametrize("rung", ["L0", "L4", "Lam0.50"])
def test_backends_train_to_the_same_students(rung):
    """The two backends follow the same trajectory up to float32 rounding."""
    tasks = _tasks(rung)
    opt = Optim(lr=3e-2, batch=32, max_steps=150, eval_every=25)
    a = train_students(tasks, rung, [1, 2], [0], opt, backend="fused")["metrics"]
    b = train_students(tasks, rung, [1, 2], [0], opt, backend="torch")["metrics"]
    assert (a.backend == "fused").all() and (b.backend == "torch").all()
    np.testing.assert_allclose(a.test_mse, b.test_mse, rtol=1e-3)


def test_backend_choice_and_fallback(monkeypatch, tmp_path, capsys):
    with pytest.raises(ValueError, match="unknown training backend"):
        pick_backend("numba", torch.device("cpu"))
    with pytest.raises(ValueError, match="CPU only"):
        pick_backend("fused", torch.device("cuda"))
    assert pick_backend("auto", torch.device("cuda")) == "torch"
    # no compiler: auto falls back to torch with a message, fused names the reason
    monkeypatch.setattr(fused, "_lib", None)
    monkeypatch.setattr(fused, "_error", None)
    monkeypatch.setenv("ENTROPIC_BOUND_CACHE", str(tmp_path))
    monkeypatch.setenv("CC", str(tmp_path / "no-such-compiler"))
    assert pick_backend("auto", torch.device("cpu")) == "torch"
    assert "did not build" in capsys.readouterr().err
    with pytest.raises(ValueError, match="fused CPU kernel is unavailable"):
        pick_backend("fused", torch.device("cpu"))
    assert not list(tmp_path.iterdir())  # nothing half-built left behind


@pytest.mark.parametrize("rung", ["L1", "L4"])
def test_evaluation_block_size_changes_nothing_but_rounding(rung):
    """The torch evaluation's sequences per block (cache-sized on CPU by default, EVAL_GPU_CHUNK on
    a GPU, anything when given) changes only the grouping of the float32 products and of the
    float64 sums: the per-student MSEs agree to float32 rounding, and with the fused kernel's."""
    from entropic_bound.backends import evaluate_fused, evaluate_torch

    n = d = 8
    t = make_task(TaskSpec(rung=rung, r_star=2, seed=0, n=n, d=d, n_train=8, n_test=300))
    X, Y = (torch.as_tensor(t[k]) for k in ("X_test", "Y_test"))
    P = torch.as_tensor(t["P"])
    gen = torch.Generator().manual_seed(0)
    k = t["kernel"].shape[0]
    A, V = torch.randn(5, k, k, generator=gen) * 0.3, torch.randn(5, d, d, generator=gen) * 0.3
    Xs, Ys = X.expand(5, *X.shape), Y.expand(5, *Y.shape)
    ref = evaluate_torch(rung, Xs, Ys, A, V, 1.0, P, chunk=300)
    for chunk in (None, 1, 7, 256):
        got = evaluate_torch(rung, Xs, Ys, A, V, 1.0, P, chunk=chunk)
        assert torch.allclose(got, ref, rtol=1e-6, atol=0)
    fused_mse = evaluate_fused(rung, X, Y, A, V, 1.0, P)
    assert torch.allclose(fused_mse.double(), ref, rtol=1e-5)
