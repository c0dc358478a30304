"""P_static's factored route: the Lanczos top singular pair and the reused X factorisation
equal the dense route (share to 1e-8, M̂ to 1e-6) on paper-scale and hand-built tasks."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from entropic_bound.predict.static import (
    STATIC_DENSE_MAX_ND,
    StaticLeastSquares,
    TopPairNotConverged,
    predict_static,
    static_operator,
    top_singular_pair,
)
from entropic_bound.tasks.make import TaskSpec, make_task


def _same_summary(a, b):
    assert np.all(np.abs(a["static_fit_share"] - b["static_fit_share"]) <= 1e-8)
    scale = np.abs(a["M_hat"]).max()
    # the sign is fixed by the same rule on both routes; compare up to sign all the same
    diff = min(np.abs(a["M_hat"] - b["M_hat"]).max(), np.abs(a["M_hat"] + b["M_hat"]).max())
    assert diff <= 1e-6 * scale


@pytest.mark.parametrize("rung", ["L0", "L1", "L2", "L3", "L4", "Lam0.50"])
def test_iterative_equals_dense_on_paper_scale_tasks(rung):
    t = make_task(TaskSpec(rung=rung, r_star=4, seed=1, n=16, d=16, n_train=512, n_test=8))
    X, Y = t["X_train"].astype(np.float64), t["Y_train"].astype(np.float64)
    lstsq = StaticLeastSquares(X)
    dense = static_operator(X, Y, method="dense", lstsq=lstsq)
    _same_summary(dense, static_operator(X, Y, method="iterative", lstsq=lstsq))
    # the factorisation reused is the factorisation redone: bitwise
    again = static_operator(X, Y, method="dense")
    assert np.array_equal(again["M_hat"], dense["M_hat"])
    assert again["static_fit_share"] == dense["static_fit_share"]


@pytest.mark.parametrize("n, d", [(3, 2), (2, 3), (4, 4)])
def test_iterative_on_hand_built_static_task(n, d):
    # Y = M X V: K = M ⊗ Vᵀ is exactly rank one after rearrangement: share 1, M̂ ∝ M
    rng = np.random.default_rng(n * 10 + d)
    X = rng.standard_normal((4 * n * d, n, d))
    M = np.diag(np.arange(n, 0, -1.0))
    V = np.linalg.qr(rng.standard_normal((d, d)))[0]
    out = predict_static(X, M @ X @ V, method="iterative")
    assert out["static_fit_share"] == pytest.approx(1.0, abs=1e-10)
    np.testing.assert_allclose(out["spectrum"] / out["spectrum"][0], np.arange(n, 0, -1) / n)
    assert out["M_hat"].sum() > 0
    _same_summary(out, predict_static(X, M @ X @ V, method="dense"))


def test_iterative_share_of_a_hand_built_mixture():
    # Y = X (e₁e₁ᵀ) + X... as K directly: R = diag(3, 4) in a 2 × 2 layout has share 16/25
    n = d = 1
    K = torch.tensor([[[3.0]]], dtype=torch.float64)
    from entropic_bound.predict.static import rearranged_summary

    out = rearranged_summary(K, n, d, True, dense=False)
    assert out["static_fit_share"] == pytest.approx(1.0)
    R = torch.diag(torch.tensor([3.0, 4.0], dtype=torch.float64))
    s1, u, v = top_singular_pair(R)
    assert float(s1) == pytest.approx(4.0, rel=1e-14)
    assert abs(float(u[1])) == pytest.approx(1.0) and abs(float(v[1])) == pytest.approx(1.0)
    assert float(s1) ** 2 / float(R.pow(2).sum()) == pytest.approx(16 / 25)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 40), st.integers(1, 40), st.floats(0.05, 0.9))
def test_top_pair_matches_svd(seed, m, k, ratio):
    # a random matrix with a planted top singular value s₁ = 1 and s₂ = ratio: the pair is unique
    g = torch.Generator().manual_seed(seed)
    r = min(m, k)
    U = torch.linalg.qr(torch.randn(m, r, generator=g, dtype=torch.float64))[0]
    W = torch.linalg.qr(torch.randn(k, r, generator=g, dtype=torch.float64))[0]
    s = torch.rand(r, generator=g, dtype=torch.float64) * ratio
    s[0] = 1.0
    if r > 1:
        s[1] = ratio
    R = (U * s) @ W.T
    s1, u, v = top_singular_pair(R)
    assert float(s1) == pytest.approx(1.0, rel=1e-10)
    assert abs(float(u @ U[:, 0])) == pytest.approx(1.0, abs=1e-9)
    assert abs(float(v @ W[:, 0])) == pytest.approx(1.0, abs=1e-9)
    torch.testing.assert_close(R @ v, s1 * u, rtol=0, atol=1e-10)


def test_top_pair_of_zero_matrix():
    s1, u, v = top_singular_pair(torch.zeros(3, 2, dtype=torch.float64))
    assert float(s1) == 0 and u.shape == (3,) and v.shape == (2,)
    K = torch.zeros(1, 4, 4, dtype=torch.float64)
    from entropic_bound.predict.static import rearranged_summary

    out = rearranged_summary(K, 2, 2, True, dense=False)
    assert out["static_fit_share"] == 0 and not out["M_hat"].any()


def test_top_pair_not_converged_raises():
    # a flat-ish spectrum and one Lanczos step: the residual is far above the tolerance
    g = torch.Generator().manual_seed(0)
    R = torch.randn(50, 40, generator=g, dtype=torch.float64)
    with pytest.raises(TopPairNotConverged, match="did not converge in 1 Lanczos steps"):
        top_singular_pair(R, max_iter=1)
    with pytest.raises(TopPairNotConverged, match="residual"):
        top_singular_pair(R, tol=1e-30)


def test_auto_route_by_size():
    rng = np.random.default_rng(0)
    assert StaticLeastSquares(rng.standard_normal((300, 8, 4))).dense
    n, d = 2, STATIC_DENSE_MAX_ND // 2 + 1
    assert not StaticLeastSquares(rng.standard_normal((n * d + 5, n, d))).dense


def test_factored_least_squares_equals_normal_equations():
    rng = np.random.default_rng(1)
    X, Y = rng.standard_normal((40, 3, 4)), rng.standard_normal((40, 3, 4))
    ls = StaticLeastSquares(X)
    ls_dense = ls.operator(Y)
    ls_factored = ls.operator(Y, dense=False)
    torch.testing.assert_close(ls_dense, ls_factored, rtol=1e-10, atol=1e-12)
    x = X.reshape(40, 12)
    ref = np.linalg.lstsq(x, Y.reshape(40, 12), rcond=None)[0].T
    np.testing.assert_allclose(ls_dense[0].numpy(), ref, atol=1e-10)


def test_bad_input():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((40, 3, 4))
    with pytest.raises(ValueError, match="shape of X"):
        StaticLeastSquares(X).operator(rng.standard_normal((39, 3, 4)))
    with pytest.raises(ValueError, match="method must be"):
        static_operator(X, X, method="lanczos")
    with pytest.raises(ValueError, match="linearly dependent"):
        StaticLeastSquares(np.ones((40, 3, 4)))


@pytest.mark.parametrize("n, d", [(4, 4), (17, 16)])  # the dense route, the factored route
def test_noisy_copy_by_linearity(n, d):
    """P_static of Y + c·N: the dense route forms the copy (bitwise the caller's Y + c·N); the
    factored route uses K(Y) + c·K(N), each product made once (K(N) shared by the tasks that
    share X and its noise draw) and equal to forming the copy to float64 rounding."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((n * d + 40, n, d))
    Ys = [rng.standard_normal(X.shape) for _ in range(4)]  # four tasks share X and N
    N, c = rng.standard_normal(X.shape), np.sqrt(0.05**2 - 0.0**2)
    lstsq = StaticLeastSquares(X)
    assert lstsq.dense == (n * d <= STATIC_DENSE_MAX_ND)
    calls = []
    compute = lstsq._compute
    lstsq._compute = lambda Y, *, dense: calls.append(Y) or compute(Y, dense=dense)
    for Y in Ys:
        clean = predict_static(X, Y, lstsq=lstsq)
        noisy = predict_static(X, Y, lstsq=lstsq, noise=N, scale=c)
        formed = predict_static(X, Y + c * N, lstsq=StaticLeastSquares(X))
        if lstsq.dense:
            assert np.array_equal(noisy["M_hat"], formed["M_hat"])
            assert noisy["static_fit_share"] == formed["static_fit_share"]
        else:
            _same_summary(noisy, formed)
            assert abs(noisy["static_fit_share"] - clean["static_fit_share"]) > 0  # it is noisy
    if not lstsq.dense:  # K(Y₁), K(N), K(Y₂), K(Y₃), K(Y₄): five products for eight fits
        assert len(calls) == 5 and calls[1] is N and sum(c is N for c in calls) == 1
