"""A head's three spectra (docs/method.md §9 (a)–(c)) on inputs solved by hand, and the
captured quantities against the model's own weights."""

import math

import numpy as np
import pytest
import torch

from entropic_bound.heads.capture import capture_layer
from entropic_bound.heads.model import ModelShape, TinyGPT, qk_kernel
from entropic_bound.heads.ranks import (
    head_ranks,
    kernel_spectrum,
    logit_field_spectra,
    pattn_spectrum,
    row_centred_logits,
)


def test_row_centring_over_the_allowed_keys_by_hand():
    L = torch.tensor([[[1.0, 9.0, 9.0], [2.0, 4.0, 9.0], [0.0, 3.0, 6.0]]])
    want = [[0.0, 0.0, 0.0], [-1.0, 1.0, 0.0], [-3.0, 0.0, 3.0]]
    assert row_centred_logits(L)[0].tolist() == want


def test_the_field_ignores_what_the_softmax_ignores():
    # a per-row shift (the softmax's invariance) and the masked entries j > i change nothing
    g = torch.Generator().manual_seed(0)
    L = torch.randn(3, 6, 6, generator=g, dtype=torch.float64)
    shifted = L + torch.randn(3, 6, 1, generator=g, dtype=torch.float64)
    shifted = shifted + torch.triu(torch.randn(3, 6, 6, generator=g, dtype=torch.float64), 1)
    assert torch.allclose(row_centred_logits(shifted), row_centred_logits(L))
    # a field that is constant along every row is no signal at all
    rows = torch.outer(torch.arange(1.0, 7), torch.ones(6)).unsqueeze(0)
    assert np.allclose(logit_field_spectra(rows), 0)


def test_the_captured_logits_are_the_kernels_bilinear_form():
    shape = ModelShape(layers=2, heads=2, d_head=3, context=5, vocab=7, mlp_ratio=2)
    torch.manual_seed(0)
    model = TinyGPT(shape).eval()
    tokens = torch.randint(0, 7, (4, 5))
    seen = capture_layer(model, tokens, layer=1, batch=3)
    assert seen["x"].shape == (4, 5, 6) and seen["y"].shape == (4, 2, 5, 3)
    assert seen["logits"].shape == (4, 2, 5, 5)
    x = seen["x"].double()
    for h in range(2):
        want = x @ qk_kernel(model, 1, h) @ x.transpose(-1, -2) / math.sqrt(3)
        assert torch.allclose(seen["logits"][:, h].double(), want, atol=1e-5)
    assert model.blocks[1].attn.capture is None  # switched off again


def linear_head(X, M, Wv, causal):
    """Y_b = mask ⊙ (X_b M X_bᵀ) X_b Wv: linear attention, d_v = Wv's columns."""
    S = X @ M @ X.transpose(-1, -2)
    if causal:
        S = torch.tril(S)
    return S @ X @ Wv


@pytest.mark.parametrize("layernorm_like", [False, True])
def test_pattn_of_an_unmasked_linear_head_with_dv_below_d_has_the_kernels_rank(layernorm_like):
    # X centred per sequence (X̃ = X): Z_b = X_b⁺ Y_b = M X_bᵀ X_b Wv, so col(C) = col(M)
    g = torch.Generator().manual_seed(0)
    B, n, d, dv, k = 64, 12, 8, 3, 2
    X = torch.randn(B, n, d, generator=g, dtype=torch.float64)
    X = X - X.mean(-2, keepdim=True)
    if layernorm_like:  # features sum to 0, as after LayerNorm: X̃ has rank d − 1
        X = X - X.mean(-1, keepdim=True)
    P = torch.eye(d, dtype=torch.float64) - 1.0 / d if layernorm_like else torch.eye(d)
    P = P.double()
    U = P @ torch.randn(d, k, generator=g, dtype=torch.float64)
    M = U @ torch.randn(k, d, generator=g, dtype=torch.float64) @ P
    Wv = torch.randn(d, dv, generator=g, dtype=torch.float64)
    s = pattn_spectrum(X, linear_head(X, M, Wv, causal=False), rtol=1e-8)
    assert s.shape == (d,)
    assert np.sum(s > 1e-6 * s[0]) == k  # sqrt of eig: rounding at √ε


def test_pattn_under_a_causal_mask_is_reported_as_measured_not_exact():
    # the mask breaks col(Z_b) ⊂ col(M): P_attn of a masked rank-2 head sees more than 2
    # directions (why the table carries it as a measurement, docs/method.md §9)
    g = torch.Generator().manual_seed(1)
    B, n, d, dv = 64, 12, 8, 3
    X = torch.randn(B, n, d, generator=g, dtype=torch.float64)
    X = X - X.mean(-2, keepdim=True)
    M = torch.randn(d, 2, generator=g, dtype=torch.float64) @ torch.randn(
        2, d, generator=g, dtype=torch.float64
    )
    s = pattn_spectrum(X, linear_head(X, M, torch.randn(d, dv, generator=g).double(), True), 1e-8)
    assert np.sum(s > 1e-6 * s[0]) > 2


def test_a_heads_row_has_every_estimator_of_every_spectrum():
    taus = [0.9, 0.99]
    s_qk = np.array([3.0, 1.0, 0.0, 0.0])
    s_logit = np.array([[2.0, 0.0], [1.0, 1.0], [1.0, 0.0]])  # r_E(0.9): 1, 2, 1 -> median 1
    row = head_ranks(kernel_spectrum(torch.diag(torch.tensor(s_qk))), s_logit, s_qk, taus)
    assert row["qk_energy_0.9"] == 1 and row["qk_energy_0.99"] == 2
    assert row["qk_stable"] == pytest.approx(10 / 9)
    assert row["logit_energy_0.9"] == 1 and row["logit_stable"] == 1
    # (3, 1, 0, 0): beyond its two values the "floor" is zeros: not applicable, with the reason
    assert math.isnan(row["qk_floor_aware"]) and row["qk_floor_na"] == "bulk of zeros"
    assert math.isnan(row["pattn_floor_aware"]) and row["pattn_floor_na"] == "bulk of zeros"
    # the logit field: (2, 0) and (1, 0) are one value and a zero; (1, 1) is flat (rank 0)
    assert math.isnan(row["logit_floor_aware"])
    assert row["logit_floor_na"] == "bulk of zeros (1/3 windows have a floor)"


def test_the_floor_aware_rank_where_a_spectrum_has_a_floor():
    # two signal values over a flat floor of 30 values at 0.1 (P_attn's β = 0: cut 1.43·0.1)
    s = np.array([5.0, 3.0] + [0.1] * 30)
    row = head_ranks(s, np.stack([s, s, s[::-1]]), s, [0.9])
    assert row["pattn_floor_aware"] == 2 and row["pattn_floor_na"] == ""
    assert row["logit_floor_aware"] == 2 and row["logit_floor_na"] == ""
    # a smoothly decaying spectrum (a power law) has no floor
    smooth = 1.0 / np.arange(1, 33) ** 1.5
    row = head_ranks(smooth, smooth[None], smooth, [0.9])
    assert math.isnan(row["pattn_floor_aware"]) and row["pattn_floor_na"] == "bulk under half"
    # nor does a geometric decay over all of it
    geometric = 0.8 ** np.arange(32)
    row = head_ranks(geometric, geometric[None], geometric, [0.9])
    assert row["pattn_floor_na"] in ("bulk under half", "bulk not flat")
    assert math.isnan(row["pattn_floor_aware"])
