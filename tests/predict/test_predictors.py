"""Data-only predictors on inputs whose answer is known exactly, plus bad input."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from entropic_bound.core.estimators import energy_rank, numerical_rank
from entropic_bound.predict.attention import predict_attention_native
from entropic_bound.predict.base import log_inversion_spectrum
from entropic_bound.predict.inversion import predict_inversion
from entropic_bound.predict.static import predict_static
from entropic_bound.tasks.make import TaskSpec, make_task


def _task(rung, r_star, n=6, d=4, B=512, **kw):
    t = make_task(TaskSpec(rung=rung, r_star=r_star, seed=0, n=n, d=d, n_train=B, n_test=8, **kw))
    return t["X_train"].astype(np.float64), t["Y_train"].astype(np.float64), t


def test_static_recovers_a_hand_built_operator():
    # Y = M X V with M = diag(2, 1, 0) and V = [[0, 1], [1, 0]]: K = M ⊗ Vᵀ is exactly rank one
    # after rearrangement, so the static-fit share is 1 and M̂ ∝ M with singular values 2, 1, 0.
    rng = np.random.default_rng(0)
    X = rng.standard_normal((64, 3, 2))
    M = np.diag([2.0, 1.0, 0.0])
    V = np.array([[0.0, 1.0], [1.0, 0.0]])
    out = predict_static(X, M @ X @ V)
    assert out["static_fit_share"] == pytest.approx(1.0, abs=1e-10)
    s = out["spectrum"] / out["spectrum"][0]
    np.testing.assert_allclose(s, [1.0, 0.5, 0.0], atol=1e-10)
    assert out["M_hat"].sum() > 0  # sign fixed


@pytest.mark.parametrize("r_star", [1, 2, 3])
def test_static_exact_on_static_linear_tasks(r_star):
    X, Y, t = _task("L0", r_star)
    out = predict_static(X, Y)
    assert out["static_fit_share"] == pytest.approx(1.0, abs=1e-6)
    assert numerical_rank(out["spectrum"]) == r_star
    assert energy_rank(out["spectrum"]) == r_star


def test_static_log_inversion_on_static_softmax_task():
    X, Y, t = _task("L1", 2)
    out = predict_static(X, Y, softmax=True)
    assert out["static_fit_share"] == pytest.approx(1.0, abs=1e-6)
    assert numerical_rank(out["spectrum"]) == 2


def test_log_inversion_removes_row_shifts():
    S = torch.tensor([[1.0, 0.0, 0.0], [0.0, 0.0, 0.0], [2.0, 0.0, 0.0]], dtype=torch.float64)
    s = log_inversion_spectrum(torch.softmax(S, -1) * 7.0)  # row scale is irrelevant
    ref = torch.linalg.svdvals(S @ (torch.eye(3, dtype=torch.float64) - 1 / 3))
    np.testing.assert_allclose(s.numpy(), ref.numpy(), atol=1e-10)


def test_static_share_below_one_on_attention():
    X, Y, _ = _task("L4", 2, n=4, d=4, B=1024)
    assert predict_static(X, Y, softmax=True)["static_fit_share"] < 0.95


@pytest.mark.parametrize("n", [4, 8])
def test_attention_native_exact_on_linear_attention(n):
    X, Y, t = _task("L3", 2, n=n, d=4, B=64)
    s = predict_attention_native(X, Y)["spectrum"]
    assert numerical_rank(s) == 2
    # for n = d, C = Σ A G_b² Aᵀ: its column space is exactly col(A)
    U = np.linalg.svd(t["kernel"].astype(np.float64))[0][:, :2]
    Z = X[0] if n > 4 else X[0]
    assert s.shape == (4,)
    assert U.shape == (4, 2) and Z.shape == (n, 4)


def test_inversion_exact_on_softmax_attention_value_known():
    X, Y, t = _task("L4", 2, n=4, d=6, B=256, value_map="known")
    s = predict_inversion(X, Y)["spectrum"]
    A = t["kernel"].astype(np.float64)
    ref = np.linalg.svd(A, compute_uv=False)
    # Â = β A / √d with β = 1: the whole spectrum, not only the rank, comes back (float32 data)
    np.testing.assert_allclose(s[:2] * math.sqrt(6), ref[:2], rtol=1e-3)
    assert numerical_rank(s) == 2


def test_inversion_right_side_uses_j_squared_equals_j():
    """operator_to_kernel's right side Σ_b X_bᵀ log(P̂_b) J J X_b is formed as log(P̂_b) (J X_b)
    (J² = J): equal to the three-product form to rounding, and the caller's J X is the same
    bits as the one it makes itself."""
    from entropic_bound.predict.base import centering
    from entropic_bound.predict.inversion import (
        inversion_normal_matrix,
        operator_to_kernel,
        token_pinv_exact,
    )

    X, Y, _ = _task("L4", 2, n=4, d=6, B=256, value_map="known")
    X, Y = torch.as_tensor(X)[None], torch.as_tensor(Y)[None]
    chol = torch.linalg.cholesky(inversion_normal_matrix(X))
    P = Y @ token_pinv_exact(X)
    J = centering(4, X.dtype)
    L = torch.log(P.clamp_min(1e-12)) @ J
    rhs = torch.einsum("gbji,gbjk->gik", X, L @ J @ X).reshape(1, 36, 1)
    three = torch.cholesky_solve(rhs, chol).reshape(1, 6, 6)
    own = operator_to_kernel(P, X, chol)
    torch.testing.assert_close(own, three, rtol=1e-12, atol=1e-12)
    assert torch.equal(operator_to_kernel(P, X, chol, JX=J @ X), own)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000))
def test_attention_native_invariant_to_token_permutation(seed):
    # linear attention is permutation-equivariant: permuting tokens of X and Y together
    # leaves every Z_b = X_b⁺ Y_b, hence the spectrum, unchanged
    X, Y, _ = _task("L3", 2, n=6, d=4, B=32)
    perm = np.random.default_rng(seed).permutation(6)
    a = predict_attention_native(X, Y)["spectrum"]
    b = predict_attention_native(X[:, perm], Y[:, perm])["spectrum"]
    np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-6 * a[0])  # float32 data: noise floor


@settings(max_examples=25, deadline=None)
@given(st.floats(1e-3, 1e3))
def test_predicted_ranks_scale_invariant(c):
    X, Y, _ = _task("L3", 2, n=6, d=4, B=64)
    assert energy_rank(predict_attention_native(X, c * Y)["spectrum"]) == 2


def test_bad_input_messages():
    X = np.zeros((8, 3, 2))
    with pytest.raises(ValueError, match="same shape"):  # d_v may differ, n may not
        predict_attention_native(X, np.zeros((8, 4, 2)))
    with pytest.raises(ValueError, match="shape"):
        predict_attention_native(np.zeros((3, 2)), np.zeros((3, 2)))
    Xn = np.random.default_rng(0).standard_normal((8, 3, 2))
    Xn[0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        predict_static(Xn, Xn)
    with pytest.raises(ValueError, match="at least n\\*d"):
        predict_static(np.ones((5, 3, 2)), np.ones((5, 3, 2)))
    with pytest.raises(ValueError, match="n >= 2"):
        predict_attention_native(np.ones((5, 1, 2)), np.ones((5, 1, 2)))
    with pytest.raises(ValueError, match="n <= d"):
        predict_inversion(np.ones((50, 4, 2)), np.ones((50, 4, 2)))
    with pytest.raises(ValueError, match="equations"):
        predict_inversion(np.ones((1, 2, 4)), np.ones((1, 2, 4)))


def _conditioned(n, d, smallest, seed=0):
    """An n × d matrix with singular values 1, …, 1, ``smallest`` (orthogonal factors seeded),
    and its pseudo-inverse as built (for ``smallest`` > 0)."""
    g = torch.Generator().manual_seed(seed)
    U, _ = torch.linalg.qr(torch.randn(n, n, generator=g, dtype=torch.float64))
    W, _ = torch.linalg.qr(torch.randn(d, d, generator=g, dtype=torch.float64))
    k = min(n, d)
    s = torch.ones(k, dtype=torch.float64)
    s[-1] = smallest
    inv = W[:, :k] @ torch.diag(1 / s) @ U[:, :k].T if smallest > 0 else None
    return U[:, :k] @ torch.diag(s) @ W[:, :k].T, inv


@pytest.mark.parametrize("n, d", [(8, 8), (5, 8)])
def test_a_near_singular_sequence_is_inverted_by_its_svd(n, d):
    """X̃ invertible but with condition 1e11: its Gram matrix (1e22) defeats Cholesky, which the
    old code reported as a singular sequence. Its X̃⁺ now comes from the SVD (to X̃'s own
    precision: relative error ~ condition × eps = 1e-6), and the other sequences' X̃⁺ are
    bitwise those of the same batch with a well-conditioned sequence in its place."""
    from entropic_bound.predict.attention import attention_native_pinv

    g = torch.Generator().manual_seed(1)
    seqs = torch.randn(1, 7, n, d, generator=g, dtype=torch.float64)
    bad, exact = _conditioned(n, d, 1e-10, seed=2)
    assert int(torch.linalg.cholesky_ex(bad.T @ bad if n >= d else bad @ bad.T)[1]) != 0
    X = seqs.clone()
    X[0, 3] = bad
    pinv = attention_native_pinv(X)
    others = [0, 1, 2, 4, 5, 6]
    assert torch.equal(pinv[:, others], attention_native_pinv(seqs)[:, others])
    err = torch.linalg.matrix_norm(pinv[0, 3] - exact) / torch.linalg.matrix_norm(exact)
    assert float(err) < 1e-3
    # a planted rank-deficient sequence is still refused, naming its flat index in the batch
    from entropic_bound.predict.attention import SingularTokens

    X[0, 5] = 1.0  # every token the same: rank one
    with pytest.raises(SingularTokens) as exc:
        attention_native_pinv(X)
    assert exc.value.index == 5
    # a sequence holding NaN or inf fails Cholesky and is refused, never handed to the SVD
    X[0, 5] = seqs[0, 5]
    for value in (float("nan"), float("inf")):
        X[0, 6] = seqs[0, 6]
        X[0, 6, 0, 0] = value
        with pytest.raises(SingularTokens) as exc:
            attention_native_pinv(X)
        assert exc.value.index == 6
    # and so is one whose Gram matrix underflows float64 (values of 1e-162: squares of 1e-324)
    X[0, 6] = seqs[0, 6] * 1e-162
    with pytest.raises(SingularTokens) as exc:
        attention_native_pinv(X)
    assert exc.value.index == 6
