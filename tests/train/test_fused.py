"""The fused CPU kernel (entropic_bound.train.fused): by hand, against autograd, and its failure modes."""

import json

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from entropic_bound.tasks.make import TaskSpec, make_task
from entropic_bound.tasks.mixing import (
    apply_operator,
    bilinear_coefficient,
    mixing_operator,
    operator_terms,
    operator_terms_adjoint,
)
from entropic_bound.train import fused
from entropic_bound.train.backends import factored_ranks
from entropic_bound.train.engine import Optim, pick_backend, train_students

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
    loss, dA, dbias, dV = fused.fused_step(X, Y, rows, A, bias, V, softmax, threads=threads)[:4]
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
    )[:4]
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


def _factored(rung, n, d, rank, S=4, B=5, seed=0, scale=0.5, beta=1.3):
    """The dense and the factored step of the same students (factors with columns ≥ rank zero)."""
    X, Y, rows, _, V, P = _problem(rung, n, d, S=S, B=B, seed=seed, scale=scale)
    g = torch.Generator().manual_seed(seed + 1)
    rank = torch.as_tensor(rank, dtype=torch.int32)
    cols = (torch.arange(d)[None, :] < torch.where(rank > 0, rank, d)[:, None]).float()
    Q = scale * torch.randn(S, d, d, generator=g) * cols[:, None, :]
    K = scale * torch.randn(S, d, d, generator=g) * cols[:, None, :]
    A, bias, soft = operator_terms(rung, Q @ K.transpose(1, 2), n=n, d=d, beta=beta, P=P)
    c = bilinear_coefficient(rung, n=n, d=d, beta=beta)
    dense = fused.fused_step(X, Y, rows, A, bias, V, soft)
    fact = fused.fused_step(X, Y, rows, A, bias, V, soft, factors=(rank, c * Q, K))
    evaluated = fused.fused_step(
        X, Y, rows, A, bias, V, soft, factors=(rank, c * Q, K), backward=False
    )
    assert torch.equal(evaluated.loss, fact.loss) and evaluated.dQa is None
    return dense, fact, Q, K, c, rank


@needs_kernel
@pytest.mark.parametrize("n,d", [(16, 16), (5, 3), (8, 24), (24, 40), (64, 64)])
@pytest.mark.parametrize("rung", ["L3", "L4", "Lam0.25"])
def test_factored_bilinear_term_equals_the_dense_one(rung, n, d):
    """A = (c Q) Kᵀ taken factored: the same loss and gradients as with A formed (to float32
    rounding), dQa = dA K and dKa = dAᵀ (c Q) in place of dA (which is 0), columns ≥ rank 0;
    the students left dense (rank 0) are computed exactly as without factors."""
    rank = [0, 1, max(1, d // 2), d]
    dense, fact, Q, K, c, rank = _factored(rung, n, d, rank)
    on = rank > 0
    assert _rel(fact.loss, dense.loss) < 1e-6 and _rel(fact.dV, dense.dV) < 5e-5
    if dense.dbias is not None:
        assert _rel(fact.dbias, dense.dbias) < 5e-5
    assert _rel(fact.dQa[on], (dense.dA @ K)[on]) < 5e-5
    assert _rel(fact.dKa[on], (dense.dA.transpose(1, 2) @ (c * Q))[on]) < 5e-5
    assert bool((fact.dA[on] == 0).all())
    assert bool((fact.dQa[~on] == 0).all()) and bool((fact.dKa[~on] == 0).all())
    for s in on.nonzero().flatten().tolist():
        assert bool((fact.dQa[s, :, int(rank[s]) :] == 0).all())
        assert bool((fact.dKa[s, :, int(rank[s]) :] == 0).all())
    for a, b in zip(fact[:4], dense[:4]):
        assert a is None or torch.equal(a[~on], b[~on])


@needs_kernel
@pytest.mark.parametrize("rung", RUNGS)
def test_every_output_element_is_written(rung, monkeypatch):
    """The kernel writes every element of every output it returns and reads none of them first:
    with the outputs' memory filled with NaN before the call (torch.empty leaves whatever was
    there), loss and gradients are bitwise those of a clean call, with and without factored
    students beside dense ones (33b7078 fixed such a bug: the factor gradients of the dense
    students of a mixed batch were left as found)."""
    n, d, beta = 6, 8, 1.3
    X, Y, rows, kern, V, P = _problem(rung, n, d, S=4)
    A, bias, soft = operator_terms(rung, kern, n=n, d=d, beta=beta, P=P)
    options = [None]
    if bilinear_coefficient(rung, n=n, d=d, beta=beta):
        g = torch.Generator().manual_seed(3)
        Q, K = torch.randn(4, d, d, generator=g), torch.randn(4, d, d, generator=g)
        options.append((torch.tensor([0, 2, 0, d], dtype=torch.int32), Q, K))
    calls = [
        lambda f=f, b=b: fused.fused_step(X, Y, rows, A, bias, V, soft, factors=f, backward=b)
        for f in options
        for b in (True, False)
    ]
    clean = [call() for call in calls]
    nan = float("nan")
    real_empty, real_like = torch.empty, torch.empty_like
    monkeypatch.setattr(torch, "empty", lambda *a, **k: real_empty(*a, **k).fill_(nan))
    monkeypatch.setattr(torch, "empty_like", lambda *a, **k: real_like(*a, **k).fill_(nan))
    assert bool(torch.empty(3).isnan().all())  # the poison reaches new buffers
    for call, want in zip(calls, clean):
        got = call()
        for a, b in zip(got, want):
            assert (a is None) == (b is None)
            assert a is None or torch.equal(a, b)  # one NaN left in a breaks the equality


@needs_kernel
@settings(max_examples=25, deadline=None)
@given(
    rung=st.sampled_from(["L3", "L4", "Lam0.50"]),
    n=st.integers(1, 20),
    d=st.integers(1, 18),
    B=st.integers(1, 7),
    seed=st.integers(0, 10**6),
    scale=st.floats(0.05, 1.0),
    data=st.data(),
)
def test_factored_bilinear_term_property(rung, n, d, B, seed, scale, data):
    rank = data.draw(st.lists(st.integers(0, d), min_size=3, max_size=3))
    dense, fact, Q, K, c, rank = _factored(rung, n, d, rank, S=3, B=B, seed=seed, scale=scale)
    on = rank > 0
    assert _rel(fact.loss, dense.loss) < 1e-4 and _rel(fact.dV, dense.dV) < 1e-4
    if bool(on.any()):
        assert _rel(fact.dQa[on], (dense.dA @ K)[on]) < 1e-4


def test_bilinear_coefficient_is_operator_terms_scale():
    """operator_terms' A is bilinear_coefficient · kernel on every rung (0: no A)."""
    P = torch.randn(6, 5)
    kern = torch.randn(5, 5)
    for rung in RUNGS + ["Lam0.75"]:
        A, _, _ = operator_terms(rung, kern, n=6, d=5, beta=1.7, P=P)
        c = bilinear_coefficient(rung, n=6, d=5, beta=1.7)
        if A is None:
            assert c == 0.0
        else:
            torch.testing.assert_close(A, c * kern, rtol=1e-6, atol=0)


def test_factored_ranks_by_rule():
    """auto: rank ≤ d/4 above n·d = 256, never at or below it; never on rungs without A."""
    r = np.arange(1, 65)
    got = factored_ranks(r, "L4", 64, 64, "auto")
    assert got.tolist() == [k if k <= 16 else 0 for k in r]
    assert not factored_ranks(np.arange(1, 17), "L4", 16, 16, "auto").any()
    assert not factored_ranks(r, "L1", 64, 64, "factored").any()
    assert factored_ranks(r, "Lam0.50", 64, 64, "factored").tolist() == r.tolist()
    assert not factored_ranks(r, "L3", 64, 64, "dense").any()
    with pytest.raises(ValueError, match="unknown train.products"):
        factored_ranks(r, "L3", 64, 64, "lowrank")


@needs_kernel
@pytest.mark.parametrize("rung", ["L3", "L4", "Lam0.50"])
def test_factored_products_train_to_the_same_students(rung):
    """Whole training with the factored products follows the dense trajectory (float32)."""
    tasks = _tasks(rung, n=6, d=8)
    opt = Optim(lr=3e-2, batch=32, max_steps=150, eval_every=25)
    a = train_students(tasks, rung, [1, 2, 5], [0], opt, backend="fused", products="dense")
    b = train_students(tasks, rung, [1, 2, 5], [0], opt, backend="fused", products="factored")
    np.testing.assert_allclose(b["metrics"].test_mse, a["metrics"].test_mse, rtol=1e-3)
    assert not a["metrics"].test_mse.equals(b["metrics"].test_mse)  # it did take the other path


@needs_kernel
def test_factored_and_dense_students_in_one_batch_train_as_alone():
    """auto factors only the low ranks (here r ≤ 10 of d = 40, n·d = 320 > 256): in one batch
    with dense students (whose factor gradients must stay exactly 0 from the kernel), every
    student trains as it does with every student dense, to float32 rounding."""
    tasks = _tasks("L4", n=8, d=40)
    opt = Optim(lr=1e-2, batch=16, max_steps=100, eval_every=25)
    ranks = [2, 10, 11, 40]
    a = train_students(tasks, "L4", ranks, [0], opt, backend="fused", products="dense")
    b = train_students(tasks, "L4", ranks, [0], opt, backend="fused", products="auto")
    np.testing.assert_allclose(b["metrics"].test_mse, a["metrics"].test_mse, rtol=1e-3)


@needs_kernel
def test_factors_bad_input():
    X, Y, rows, kern, V, P = _problem("L4", 4, 4)
    Q = torch.zeros(5, 4, 4)
    with pytest.raises(ValueError, match="ranks in 0..c"):
        fused.fused_step(X, Y, rows, kern, None, V, True, factors=(torch.full((5,), 5), Q, Q))
    with pytest.raises(ValueError, match="factors need A"):
        fused.fused_step(X, Y, rows, None, kern, V, True, factors=(torch.ones(5), Q, Q))
    with pytest.raises(ValueError, match="factors need A"):
        fused.fused_step(X, Y, rows, kern, None, V, True, factors=(torch.ones(4), Q, Q))


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
    from entropic_bound.train.backends import evaluate_fused, evaluate_torch

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


def test_the_build_target_is_native_unless_chosen(monkeypatch):
    """$ENTROPIC_BOUND_MARCH picks another -march (the AVX2 path on an AVX-512 machine, from
    which benchmarks/reference/tolerances.yaml was measured); the cache key holds the flags."""
    gcc = "gcc (GCC) 13.3.0"
    monkeypatch.delenv(fused.MARCH_ENV, raising=False)
    assert "-march=native" in fused.build_flags(gcc)
    monkeypatch.setenv(fused.MARCH_ENV, "x86-64-v3")
    flags = fused.build_flags(gcc)
    assert "-march=x86-64-v3" in flags and "-march=native" not in flags
    assert "--param=avoid-fma-max-bits=0" in flags  # kept: every a·b + c one FMA
    assert "--param=avoid-fma-max-bits=0" not in fused.build_flags("clang version 18")
    assert "built with -march=x86-64-v3" in fused.cpu_summary()
    monkeypatch.setenv(fused.MARCH_ENV, "x86-64; rm -rf /")
    with pytest.raises(RuntimeError, match="not a -march target"):
        fused.build_flags(gcc)
