"""`entropic-bound predict` on data shaped like real attention: a softmax head over a
floor, causal masks, d_v ≠ d, many heads. Every input is made here in plain numpy (not the
project's task generator), the way a user would."""

import json

import numpy as np
import pytest
import torch

from entropic_bound.cli.main import main
from entropic_bound.predict import recommend_rank
from entropic_bound.predict.causal import fit_causal, prefix_apply
from entropic_bound.predict.static import predict_static


def kernel(d: int, r: int, rng) -> np.ndarray:
    """A rank-r QK kernel, singular values linspace(1, 0.5, r), Frobenius norm √d."""
    U, _ = np.linalg.qr(rng.standard_normal((d, r)))
    W, _ = np.linalg.qr(rng.standard_normal((d, r)))
    A = U @ np.diag(np.linspace(1, 0.5, r)) @ W.T
    return A * np.sqrt(d) / np.linalg.norm(A)


def attention(X, A, V, *, softmax: bool, causal: bool = False) -> np.ndarray:
    """Y = M(X) X V, M = softmax_row(X A Xᵀ/√d) or X A Xᵀ/n, masked to j ≤ i when causal."""
    n, d = X.shape[-2:]
    L = X @ A @ X.transpose(0, 2, 1)
    mask = np.tril(np.ones((n, n))) if causal else np.ones((n, n))
    if softmax:
        S = np.where(mask > 0, L / np.sqrt(d), -np.inf)
        M = np.exp(S - S.max(-1, keepdims=True))
        M /= M.sum(-1, keepdims=True)
    else:
        M = L / n * mask
    return M @ X @ V


def run_json(capsys, *argv) -> dict:
    assert main([*map(str, argv), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def error_of(capsys, *argv) -> str:
    assert main(list(map(str, argv))) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("entropic-bound: error: ")
    return err


# ------------------------------------ three examples (docs/cli.md, "Real attention data")


@pytest.fixture(scope="module")
def softmax3():
    """Example (a): a softmax head with a rank-3 QK kernel, B = 2048, n = 32, d = 16, σ = 0.01."""
    rng = np.random.default_rng(7)
    A, (V, _) = kernel(16, 3, rng), np.linalg.qr(rng.standard_normal((16, 16)))
    X = rng.standard_normal((2048, 32, 16))
    Y = attention(X, A, V, softmax=True) + 0.01 * rng.standard_normal(X.shape)
    return X, Y


def test_softmax_head_of_rank_3_is_read_at_its_gap(softmax3):
    rec = recommend_rank(*softmax3)
    r = rec.report["recommendation"]
    assert rec.rank == 3 and rec.estimator == "floor" and rec.predictor == "P_attn"
    # the safe rank is stated beside the gap, with the evidence (the floor and its energy)
    assert r["gap_rank"] == 3 and r["safe_rank"] > 3
    assert f"r_E(0.99) counts the floor and gives {r['safe_rank']}" in r["gap_note"]
    assert 0 < r["floor"] < 0.5 and r["floor_energy"] > 0.01
    # an explicit --estimator energy_0.99 falls back to the safe rank and says so
    rec99 = recommend_rank(*softmax3, estimator="energy_0.99")
    r99 = rec99.report["recommendation"]
    assert rec99.rank == r["safe_rank"] > 3
    assert "the spectrum shows a gap at 3" in r99["gap_note"]
    assert "falls back to the safe rank" in r99["gap_note"]


def test_causal_linear_attention_of_rank_3_is_exact(capsys, tmp_path):
    """Example (b): causal linear attention, rank 3, no noise: 3 and σ̂ ≈ 0, by --causal and
    by a `mask` member."""
    rng = np.random.default_rng(1)
    A, (V, _) = kernel(16, 3, rng), np.linalg.qr(rng.standard_normal((16, 16)))
    X = rng.standard_normal((512, 32, 16))  # B = n·d: P_static's least squares is determined
    Y = attention(X, A, V, softmax=False, causal=True)
    np.savez(tmp_path / "c.npz", X=X, Y=Y)
    np.savez(tmp_path / "m.npz", X=X, Y=Y, mask=np.tril(np.ones((32, 32))))
    for argv in ([tmp_path / "c.npz", "--causal"], [tmp_path / "m.npz"]):
        res = run_json(capsys, "predict", *argv)
        rec = res["recommendation"]
        assert (rec["min_qk_rank"], rec["confidence"], rec["gap_rank"]) == (3, "exact", 3)
        assert res["input"]["causal"] is True
        assert res["frontier"]["noise"]["sigma_hat"] < 1e-4
        assert res["frontier"]["noise"]["relative"] < 1e-4
        # P_static's rank is refused under the mask (its share is kept), P_invert is skipped
        assert "rank not read under the causal mask" in res["predictors"]["P_static"]["status"]
        assert res["static_fit_share"] is not None
    # without the mask the same data are not read as rank 3 (the per-sequence map is wrong)
    res = run_json(capsys, "predict", tmp_path / "c.npz", "--no-static")
    assert (
        res["recommendation"]["min_qk_rank"] != 3 or res["recommendation"]["confidence"] != "exact"
    )


def test_value_dimension_8_of_16(capsys, tmp_path):
    """Example (c): d_v = 8 ≠ d = 16 is accepted; linear attention is exact, softmax at its gap."""
    rng = np.random.default_rng(2)
    A, (V, _) = kernel(16, 3, rng), np.linalg.qr(rng.standard_normal((16, 16)))
    X = rng.standard_normal((2048, 32, 16))
    lin = attention(X, A, V[:, :8], softmax=False)
    rec = recommend_rank(X, lin)
    assert (rec.rank, rec.confidence) == (3, "exact")
    assert rec.report["input"]["d_v"] == 8
    soft = attention(X, A, V[:, :8], softmax=True) + 0.01 * rng.standard_normal(lin.shape)
    np.savez(tmp_path / "v.npz", X=X, Y=soft)
    res = run_json(capsys, "predict", tmp_path / "v.npz", "--value-known")
    assert res["recommendation"]["min_qk_rank"] == 3
    # P_invert needs V invertible: refused with the reason
    assert "needs V invertible" in res["predictors"]["P_invert"]["status"]
    assert res["predictors"]["P_static"]["status"] == "ok"  # K = M ⊗ Vᵀ is n·d_v × n·d


# ---------------------------------------------------------------- many heads


@pytest.mark.extras
def test_heads_one_row_each(capsys, tmp_path):
    rng = np.random.default_rng(3)
    X = rng.standard_normal((512, 24, 8))
    V, _ = np.linalg.qr(rng.standard_normal((8, 8)))
    Y = np.stack(
        [attention(X, kernel(8, r, rng), V[:, :4], softmax=False) for r in (1, 2, 3)], axis=1
    )
    np.savez(tmp_path / "h.npz", X=X, Y=Y)
    res = run_json(capsys, "predict", tmp_path / "h.npz", "--no-static")
    assert [h["recommendation"]["min_qk_rank"] for h in res["heads"]] == [1, 2, 3]
    assert [h["input"]["head"] for h in res["heads"]] == [0, 1, 2]
    assert main(["predict", str(tmp_path / "h.npz"), "--no-static"]) == 0
    text = capsys.readouterr().out
    rows = [ln.split() for ln in text.splitlines() if ln.strip()[:1].isdigit()]
    assert [(r[0], r[1]) for r in rows] == [("0", "1"), ("1", "2"), ("2", "3")]
    one = run_json(capsys, "predict", tmp_path / "h.npz", "--no-static", "--head", 2)
    assert one["recommendation"]["min_qk_rank"] == 3 and one["input"]["head"] == 2
    assert "heads 0 … 2" in error_of(capsys, "predict", tmp_path / "h.npz", "--head", 3)
    err = error_of(capsys, "predict", tmp_path / "h.npz", "--plot", tmp_path / "p.png")
    assert "--head" in err and not (tmp_path / "p.png").exists()


# ---------------------------------------------------------------- masks refused


@pytest.mark.parametrize(
    "mask, says",
    [
        (np.triu(np.ones((6, 6))), "neither causal"),
        (np.ones((5, 5)), "shape (5, 5)"),
        (np.tril(np.ones((6, 6)), -1), "neither causal"),  # no diagonal: not what we model
    ],
)
def test_bad_masks_are_refused(capsys, tmp_path, mask, says):
    rng = np.random.default_rng(4)
    np.savez(
        tmp_path / "b.npz",
        X=rng.standard_normal((64, 6, 3)),
        Y=rng.standard_normal((64, 6, 3)),
        mask=mask,
    )
    assert says in error_of(capsys, "predict", tmp_path / "b.npz", "--no-static")


def test_all_ones_mask_is_not_causal(capsys, tmp_path):
    rng = np.random.default_rng(5)
    X = rng.standard_normal((256, 12, 4))
    Y = attention(X, kernel(4, 2, rng), np.eye(4), softmax=False)
    np.savez(tmp_path / "o.npz", X=X, Y=Y, mask=np.ones((12, 12)))
    res = run_json(capsys, "predict", tmp_path / "o.npz", "--no-static")
    assert res["input"]["causal"] is False and res["recommendation"]["min_qk_rank"] == 2


def test_causal_p_invert_is_exact(capsys, tmp_path):
    """Causal softmax, value known, n ≤ d: the rows of log P̂ centred over j ≤ i give A exactly
    (the non-causal P_invert, which centres over every j, does not)."""
    from entropic_bound.predict.inversion import predict_inversion

    rng = np.random.default_rng(6)
    A = kernel(8, 2, rng)
    X = rng.standard_normal((256, 6, 8))
    Y = attention(X, A, np.eye(8), softmax=True, causal=True)
    s = predict_inversion(X, Y, causal=True)["spectrum"]
    sA = np.linalg.svd(A, compute_uv=False)
    np.testing.assert_allclose(s * np.sqrt(8), sA, atol=1e-8)  # Â = A β/√d, β = 1
    assert predict_inversion(X, Y)["spectrum"][2] > 0.1 * s[0]  # unmasked: wrong
    np.savez(tmp_path / "s.npz", X=X, Y=Y)
    res = run_json(
        capsys, "predict", tmp_path / "s.npz", "--causal", "--value-known", "--no-static"
    )
    rec = res["recommendation"]
    assert (rec["min_qk_rank"], rec["predictor"]) == (2, "P_invert")
    assert "centred over its own j <= i" in rec["why"]
    with pytest.raises(ValueError, match=r"n\(n−1\)/2 >= d²"):
        predict_inversion(X[:2], Y[:2], causal=True)


# ---------------------------------------------------------------- the maths, by hand


def test_prefix_apply_by_hand():
    """P_i v for n = 2, d = 2, X = [[1, 0], [0, 2]], column by column (v = e_1, e_2)."""
    X = torch.tensor([[[1.0, 0.0], [0.0, 2.0]]], dtype=torch.float64)

    def P(prefix, i):  # the matrix P_i, from apply on the unit vectors at row i
        apply, mean = prefix_apply(X, prefix)
        cols = []
        for k in range(2):
            V = torch.zeros(1, 2, 2, dtype=torch.float64)
            V[0, i, k] = 1.0
            cols.append(apply(V)[0, i])
        return torch.stack(cols, 1), mean

    P0, _ = P("moment", 0)
    P1, mean = P("moment", 1)
    torch.testing.assert_close(P0, torch.tensor([[0.5, 0.0], [0.0, 0.0]], dtype=torch.float64))
    torch.testing.assert_close(P1, torch.tensor([[0.5, 0.0], [0.0, 2.0]], dtype=torch.float64))
    torch.testing.assert_close(mean[0, 1], torch.tensor([0.5, 1.0], dtype=torch.float64))
    C1, _ = P("covariance", 1)  # x̄_2 = (0.5, 1): deviations ±(0.5, −1)
    torch.testing.assert_close(C1, torch.tensor([[0.25, -0.5], [-0.5, 1.0]], dtype=torch.float64))
    torch.testing.assert_close(P("covariance", 0)[0], torch.zeros(2, 2, dtype=torch.float64))
    with pytest.raises(ValueError, match="moment or covariance"):
        prefix_apply(X, "second")


def test_causal_fit_is_exact_and_value_free():
    """Rank-1 A = u vᵀ: svd(Â) ∝ (1, 0, 0) with zero residual, for V = I and for a d × d_v value
    map; the degrees of freedom are rows·d_v − (d² + 2·d·d_v)."""
    from entropic_bound.core.estimators import energy_rank

    rng = np.random.default_rng(8)
    u, v = rng.standard_normal(3), rng.standard_normal(3)
    X = rng.standard_normal((64, 10, 3))
    for V in (np.eye(3), rng.standard_normal((3, 2))):
        Y = attention(X, np.outer(u, v), V, softmax=False, causal=True)
        fit = fit_causal(X, Y)
        s = fit.spectrum.numpy()
        assert energy_rank(s, 0.99) == 1 and fit.converged
        assert fit.dof == 640 * V.shape[1] - (9 + 2 * 3 * V.shape[1])
        # ALS is a local method: a bilinear least squares can stall at a non-global stationary
        # point from one start (here from A = I with V 3 × 2: 0.6 % residual); of the seeded
        # starts the least residual is kept, which is exact here
        assert s[1] / s[0] < 1e-6 and fit.resid / fit.target < 1e-12
    with pytest.raises(ValueError, match="supply more sequences"):
        fit_causal(X[:1, :3], Y[:1, :3])


def test_static_with_value_dimension():
    """A static task Y = M X V with V: [d, d_v]: K = M ⊗ Vᵀ, so M̂ ∝ M and the share is 1."""
    rng = np.random.default_rng(9)
    n, d, dv = 4, 3, 2
    M = rng.standard_normal((n, n))
    V = rng.standard_normal((d, dv))
    X = rng.standard_normal((200, n, d))
    st = predict_static(X, M @ X @ V)
    assert st["static_fit_share"] == pytest.approx(1.0)
    Mh = st["M_hat"]
    assert abs(np.sum(Mh * M)) / (np.linalg.norm(Mh) * np.linalg.norm(M)) == pytest.approx(1.0)


def test_projected_gradient_is_the_derivative():
    """The fit's gradient (W and the prefix-mean term eliminated) against central differences,
    both prefixes, d_v ≠ d, a key side with fewer coordinates than the query side."""
    from entropic_bound.predict.causal import _Problem

    rng = np.random.default_rng(11)
    X = torch.tensor(rng.standard_normal((6, 5, 3)))
    XR = X @ torch.tensor(rng.standard_normal((3, 2)))  # the key side's own (reduced) coordinates
    Y = torch.tensor(rng.standard_normal((6, 5, 2)))
    A = torch.tensor(rng.standard_normal((3, 2)))
    for prefix in ("moment", "covariance"):
        p = _Problem(X, XR, Y.reshape(30, 2), prefix)
        _, grad = p.value_grad(A)
        h, num = 1e-6, torch.zeros(3, 2, dtype=torch.float64)
        for a in range(3):
            for b in range(2):
                E = torch.zeros(3, 2, dtype=torch.float64)
                E[a, b] = h
                num[a, b] = (p.value_grad(A + E)[0] - p.value_grad(A - E)[0]) / (2 * h)
        torch.testing.assert_close(grad, num, rtol=1e-6, atol=1e-8)


def test_causal_fit_is_exact_on_badly_scaled_inputs():
    """Inputs scaled like a LayerNorm's output (gains 1e-2 … 10, a shared offset: second moment
    of condition > 10⁴) still give the kernel exactly: the fit runs whitened, and its spectrum
    is svd(M^½ A M^½) (linear attention: the second moment on both sides) up to scale. Read in
    the data's scale the second direction holds 0.04 % of the logit energy, so r_E(0.999) is 1:
    the count of directions above rounding is the exact rank, 2."""
    from entropic_bound.core.estimators import energy_rank

    rng = np.random.default_rng(12)
    d = 6
    gains = np.geomspace(1e-2, 10, d)
    X = rng.standard_normal((96, 12, d)) * gains + 0.5
    u, v = rng.standard_normal((d, 2)), rng.standard_normal((d, 2))
    A = u @ v.T
    assert np.linalg.cond(X.reshape(-1, d).T @ X.reshape(-1, d)) > 1e4
    Y = attention(X, A, rng.standard_normal((d, 3)), softmax=False, causal=True)
    fit = fit_causal(X, Y)
    s = fit.spectrum.numpy()
    flat = X.reshape(-1, d)
    root = _sqrtm(flat.T @ flat / len(flat))
    truth = np.linalg.svd(root @ A @ root, compute_uv=False)
    np.testing.assert_allclose(s[:2] / s[0], truth[:2] / truth[0], rtol=1e-6)
    assert energy_rank(s, 0.999) == 1 and s[1] / s[0] > 1e-2 and s[2] / s[0] < 1e-9
    assert fit.converged and fit.resid / fit.target < 1e-12


def _layernormed(rng, B, n, d):
    """Tokens through a LayerNorm with gain γ and bias b: xᵀ(1/γ) is the same for every token."""
    z = rng.standard_normal((B, n, d)) @ rng.standard_normal((d, d))
    zc = z - z.mean(-1, keepdims=True)
    gamma, bias = np.exp(0.5 * rng.standard_normal(d)), 0.3 * rng.standard_normal(d)
    return gamma * zc / zc.std(-1, keepdims=True) + bias, 1 / gamma


def _first_order_causal(X, A, V, V0):
    """y_i = x̄_{≤i}ᵀ V0 + x_iᵀ A Q_i V: the first-order causal softmax form, exactly."""
    Xt = torch.tensor(X)
    apply, mean = prefix_apply(Xt, "covariance")
    return (mean @ torch.tensor(V0) + apply(Xt @ torch.tensor(A)) @ torch.tensor(V)).numpy()


def _sqrtm(G):
    w, U = np.linalg.eigh(G)
    return U @ np.diag(np.sqrt(np.clip(w, 0, None))) @ U.T


def test_causal_fit_on_layernormed_inputs_reads_the_kernel_in_the_data_scale():
    """LayerNorm'd tokens (xᵀ(1/γ) constant) and data of the exact first-order form with a
    rank-2 A: A and A + a·(1/γ)ᵀ make the same Y, the fit drops 1/γ on the key side (nothing
    reported along it), and its spectrum is svd(M^½ A C^½) up to scale, to 1e-6."""
    rng = np.random.default_rng(21)
    B, n, d, dv = 96, 12, 6, 3
    X, w = _layernormed(rng, B, n, d)
    A = rng.standard_normal((d, 2)) @ rng.standard_normal((2, d))
    V, V0 = rng.standard_normal((d, dv)), rng.standard_normal((d, dv))
    Y = _first_order_causal(X, A, V, V0)
    shifted = _first_order_causal(X, A + np.outer(rng.standard_normal(d), w), V, V0)
    np.testing.assert_allclose(shifted, Y, atol=1e-9 * np.abs(Y).max())
    flat = X.reshape(-1, d)
    M, mu = flat.T @ flat / len(flat), flat.mean(0)
    truth = np.linalg.svd(_sqrtm(M) @ A @ _sqrtm(M - np.outer(mu, mu)), compute_uv=False)
    fit = fit_causal(X, Y, prefix="covariance")
    s = fit.spectrum.numpy()
    assert fit.dropped == (0, 1) and s[-1] == 0.0
    np.testing.assert_allclose(s[:2] / s[0], truth[:2] / truth[0], rtol=1e-6)
    assert s[2] / s[0] < 1e-6 and fit.resid / fit.target < 1e-12
    K = fit.kernel.numpy()
    assert np.linalg.norm(K @ w) < 1e-9 * np.linalg.norm(K) * np.linalg.norm(w)


def test_causal_fit_of_constant_tokens_is_refused():
    X = np.ones((64, 10, 3))
    with pytest.raises(ValueError, match="do not vary"):
        fit_causal(X, X[..., :2], prefix="covariance")


def test_a_fit_stopped_at_its_cap_says_so():
    rng = np.random.default_rng(13)
    X = rng.standard_normal((64, 10, 4))
    Y = attention(X, rng.standard_normal((4, 4)), np.eye(4), softmax=False, causal=True)
    Y = Y + 0.1 * rng.standard_normal(Y.shape)
    fit = fit_causal(X, Y, max_iter=1, starts=1)
    assert not fit.converged and fit.iterations <= 20


def test_loss_knee_reads_a_rank_2_head_exactly_and_fits_one_head(capsys, tmp_path):
    rng = np.random.default_rng(4)
    X = rng.standard_normal((24, 12, 6))
    Y = attention(X, 2.0 * kernel(6, 2, rng), np.eye(6)[:, :4], softmax=True)
    np.savez(tmp_path / "h.npz", X=X, Y=Y)
    lk = run_json(capsys, "predict", tmp_path / "h.npz", "--loss-knee")["loss_knee"]
    assert lk["knee"] == 2 and lk["fraction"] == 0.01 and lk["full"] < 1e-6 * lk["ablated"]
    np.savez(tmp_path / "hh.npz", X=X, Y=np.stack([Y, Y], axis=1))
    assert "--head h" in error_of(capsys, "predict", tmp_path / "hh.npz", "--loss-knee")
    assert main(["predict", str(tmp_path / "h.npz"), "--loss-knee"]) == 0
    assert "Loss knee: 2:" in capsys.readouterr().out
