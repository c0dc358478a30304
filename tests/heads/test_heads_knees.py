"""The truncation knee (docs/method.md §9 (d)): the rule on losses solved by hand, the
re-factorised truncation, and a planted low-rank head whose knee the probe must find."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from entropic_bound.heads.knees import KneeProbe, knee_of, truncated_factors
from entropic_bound.heads.model import ModelShape, TinyGPT, head_weights, qk_kernel


@pytest.mark.parametrize(
    "losses, full, ablated, knee",
    [
        ([3.0, 2.5, 2.0101, 2.0], 2.0, 3.0, 3),  # 0.0101 > 0.01 · 1.0: r = 2 is not enough
        ([3.0, 2.5, 2.0100, 2.0], 2.0, 3.0, 2),  # exactly 1 % of the gap
        ([2.0, 2.5, 2.4, 2.0], 2.0, 3.0, 0),  # a uniform pattern already does
        ([3.0, 2.0, 2.5, 2.0], 2.0, 3.0, 1),  # the least r, even where L(r) is not monotone
        ([3.0, 2.0], 2.0, 2.0, math.nan),  # no gap: ablating the head costs nothing
        ([3.0, 2.0], 2.0, 1.9, math.nan),  # ablating it helps
    ],
)
def test_knee_rule_by_hand(losses, full, ablated, knee):
    got = knee_of(losses, full, ablated, fraction=0.01)
    assert got == knee or (math.isnan(knee) and math.isnan(got))


@given(
    st.lists(st.floats(0, 10), min_size=1, max_size=20),
    st.floats(0.1, 5),
    st.floats(0.001, 0.5),
)
def test_knee_is_the_least_rank_within_the_allowance(extra, gap, fraction):
    full = 1.0
    losses = [full + e for e in extra] + [full]  # L(d_head) = L_full always
    ablated = full + gap
    knee = int(knee_of(losses, full, ablated, fraction))
    gap = ablated - full  # as the rule reads it (full + 0.1 − full is not 0.1 in floats)
    assert losses[knee] - full <= fraction * gap
    assert all(loss - full > fraction * gap for loss in losses[:knee])


def test_truncated_factors_are_the_best_rank_r_kernel_in_the_heads_shapes():
    g = torch.Generator().manual_seed(0)
    Wq, Wk = torch.randn(4, 10, generator=g), torch.randn(4, 10, generator=g)
    M = (Wq.T @ Wk).double()
    U, S, Vh = torch.linalg.svd(M)
    for r in range(5):
        q, k = truncated_factors(Wq, Wk, r)
        assert q.shape == Wq.shape and k.shape == Wk.shape
        assert (q[r:] == 0).all() and (k[r:] == 0).all()
        best = (U[:, :r] * S[:r]) @ Vh[:r]
        assert torch.allclose(q.double().T @ k.double(), best, atol=1e-5)
    q, k = truncated_factors(Wq, Wk, 4)
    assert torch.allclose(q.double().T @ k.double(), M, atol=1e-5)


def test_the_inputs_metric_truncation_is_the_best_rank_r_kernel_in_that_metric():
    g = torch.Generator().manual_seed(2)
    Wq, Wk = torch.randn(4, 10, generator=g), torch.randn(4, 10, generator=g)
    M = (Wq.T @ Wk).double()
    # isotropic inputs: the metric changes nothing
    for r in range(5):
        plain = truncated_factors(Wq, Wk, r)
        iso = truncated_factors(Wq, Wk, r, 3.0 * torch.eye(10))
        assert torch.allclose(
            plain[0].double().T @ plain[1].double(), iso[0].double().T @ iso[1].double(), atol=1e-5
        )
    # anisotropic inputs with a null direction (a LayerNorm's): in the metric's own norm
    # ‖G^½ (M − M_r) G^½‖ the metric truncation is no worse than the plain one, at every r
    A = torch.randn(10, 10, generator=g, dtype=torch.float64) * torch.logspace(0, -2, 10).double()
    A[:, 0] = 0
    G = A @ A.T
    evals, U = torch.linalg.eigh(G)
    half = U @ torch.diag(evals.clamp(min=0).sqrt()) @ U.T
    for r in range(1, 4):
        errs = []
        for metric in (None, G):
            q, k = truncated_factors(Wq, Wk, r, metric)
            errs.append(torch.linalg.norm(half @ (M - q.double().T @ k.double()) @ half))
        assert errs[1] <= errs[0] + 1e-6
    assert errs[1] < errs[0]


def planted_model(rank: int, seed: int = 1) -> TinyGPT:
    """One layer, one head of d_head 4 whose W_Qᵀ W_K has rank ``rank`` (singular values 16,
    15, 14 …) and whose output reaches the logits strongly; the MLP is off."""
    shape = ModelShape(layers=1, heads=1, d_head=4, context=12, vocab=16, mlp_ratio=1)
    torch.manual_seed(seed)
    model = TinyGPT(shape).eval()
    with torch.no_grad():
        model.tok.weight.normal_(0, 3.0)
        model.pos.weight.normal_(0, 1.0)
        for p in model.blocks[0].mlp.parameters():
            p.zero_()
        w, d = head_weights(model, 0, 0), shape.d_model
        U, V = torch.linalg.qr(torch.randn(d, d))[0], torch.linalg.qr(torch.randn(d, d))[0]
        root = torch.tensor([4.0, 15**0.5, 14**0.5, 13**0.5])[:rank]
        w["q"].zero_()
        w["k"].zero_()
        w["q"][:rank] = (U[:, :rank] * root).T
        w["k"][:rank] = (V[:, :rank] * root).T
        w["v"].copy_(3 * torch.eye(4))
        model.blocks[0].attn.proj.weight.copy_(3 * torch.eye(4))
    return model


def sampled_text(model: TinyGPT, count: int, n: int, seed: int = 1) -> torch.Tensor:
    """Windows [count, n + 1] drawn from the model itself: the full model is the true
    distribution, so any edit raises the expected loss (the gap is positive)."""
    g = torch.Generator().manual_seed(seed)
    seq = torch.randint(0, model.shape.vocab, (count, 1), generator=g)
    with torch.no_grad():
        for _ in range(n):
            probs = model(seq)[:, -1].softmax(-1)
            seq = torch.cat([seq, torch.multinomial(probs, 1, generator=g)], 1)
    return seq


@pytest.mark.parametrize("rank", [1, 2, 3])
def test_the_probe_finds_a_planted_heads_knee(rank):
    model = planted_model(rank)
    kernel = qk_kernel(model, 0, 0)
    assert int(torch.linalg.matrix_rank(kernel)) == rank
    weights = {k: v.clone() for k, v in model.state_dict().items()}
    probe = KneeProbe(model, sampled_text(model, 64, 12), batch=16)
    per_window = probe.window_losses(0)
    assert per_window.shape == (64,) and probe.loss(0) == pytest.approx(per_window.mean())
    windows = probe.truncation_curve(0, 0, per_window)
    assert windows.shape == (5, 64) and np.array_equal(windows[-1], per_window)
    full, ablated = float(per_window.mean()), float(probe.ablated(0, 0).mean())
    curve = windows.mean(1)
    assert ablated - full > 0.5  # the head matters
    assert np.all(np.abs(curve[rank:] - full) < 1e-5)  # the kernel itself from r = rank on
    assert curve[rank - 1] - full > 0.01 * (ablated - full)  # one rank less is too few
    assert knee_of(curve, full, ablated) == rank
    # every edit is undone: the same weights, the same loss
    assert all(torch.equal(v, weights[k]) for k, v in model.state_dict().items())
    assert probe.loss(0) == full and model.blocks[0].attn.mean_ablate == {}


def test_the_stream_cache_gives_the_models_own_loss():
    from entropic_bound.heads.model import next_token_loss

    shape = ModelShape(layers=3, heads=2, d_head=2, context=8, vocab=11, mlp_ratio=2)
    torch.manual_seed(0)
    model = TinyGPT(shape).eval()
    data = torch.randint(0, 11, (10, 9))
    with torch.no_grad():
        direct = float(next_token_loss(model(data[:, :-1]), data[:, 1:]))
    probe = KneeProbe(model, data, batch=4)
    for layer in range(3):
        assert probe.loss(layer) == pytest.approx(direct, abs=1e-6)
