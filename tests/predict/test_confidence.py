"""The signals that lower the recommendation's confidence (predict/confidence.py), each on an
input solved by hand and on a fabricated input that must fire it; and the gap / safe rank
wording (gap <= safe, always)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from entropic_bound.core.estimators import all_estimators
from entropic_bound.predict import recommend_rank
from entropic_bound.predict.confidence import (
    CONFIDENT,
    Tally,
    axis_index,
    causal_signature,
    edge_rank,
)
from entropic_bound.predict.recommend import gap_and_safe


def test_edge_rank_counts_the_values_between_the_floor_edge_and_the_cut():
    s = np.array([1.0, 0.9, 0.8, 0.7, 0.5] + [0.4] * 11)  # d = 16, floor 0.4 from the 5th value
    k, edge = edge_rank(s, 4, 2048)
    # floor median over s[4:] = 0.4; edge = 0.4 (1 + √(12/2048)) = 0.4306 < 0.5 < 1.43·0.4
    assert math.isclose(edge, 0.4 * (1 + math.sqrt(12 / 2048)))
    assert k == 5
    assert edge_rank(s, 5, 2048)[0] == 5  # nothing left between: the gap stands
    assert edge_rank(np.array([1.0, 0.5]), 2, 100) == (2, 0.0)  # no floor at all


def _softmax(logits, causal):
    if causal:
        n = logits.shape[-1]
        logits = np.where(np.tril(np.ones((n, n), bool)), logits, -np.inf)
    P = np.exp(logits - logits.max(-1, keepdims=True))
    return P / P.sum(-1, keepdims=True)


def _attention(B=512, n=24, d=8, r=2, std=1.0, causal=False, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((d, r)) @ rng.standard_normal((r, d))
    A *= std / np.linalg.norm(A)
    X = rng.standard_normal((B, n, d))
    V = rng.standard_normal((d, d)) / math.sqrt(d)
    return X, _softmax(X @ A @ X.transpose(0, 2, 1), causal) @ X @ V


def _tally(X, Y):
    t = Tally()
    t.add(X, Y)
    return t


def test_the_causal_signature_fires_on_causal_softmax_only():
    X, Y = _attention(causal=True)
    sig = causal_signature(_tally(X, Y))
    assert sig["first_r2"] > 0.999 and sig["looks_causal"]  # y_0 = x_0ᵀV exactly
    X, Y = _attention(causal=False)
    assert not causal_signature(_tally(X, Y))["looks_causal"]
    V = np.random.default_rng(1).standard_normal((8, 8))
    tokenwise = causal_signature(_tally(X, X @ V))  # no mixing: every token fits itself
    assert tokenwise["first_r2"] > 0.999 and tokenwise["last_r2"] > 0.999
    assert not tokenwise["looks_causal"]


class _Acc:
    def __init__(self, Y):
        self.n, self.y2 = Y.shape[1], float(np.sum(Y**2))


def test_the_first_axis_index_sees_tokens_on_the_first_axis():
    X, Y = _attention(B=64, n=48, std=1.0)
    right = axis_index(_tally(X, Y), _Acc(Y))
    assert right < 1.5  # independent sequences: ≈ 1
    Xt, Yt = X.swapaxes(0, 1).copy(), Y.swapaxes(0, 1).copy()  # [n, B, d] read as [B, n, d]
    wrong = axis_index(_tally(Xt, Yt), _Acc(Yt))
    assert wrong > 5


@pytest.mark.parametrize("causal", [False, True])
def test_causal_data_without_the_mask_lower_the_confidence_and_say_the_fix(causal):
    X, Y = _attention(B=1024, n=24, d=8, r=3, std=2.0, causal=True)
    rec = recommend_rank(X, Y, causal=causal, no_static=True)
    said = rec.report["recommendation"]
    if causal:  # read with its mask: the signal has nothing to say
        assert not any("look causal" in why for why in said["lowered_by"])
    else:
        assert rec.confidence not in CONFIDENT
        assert "--causal" in said["fix"] and "look causal" in rec.why


def test_transposed_layout_lowers_the_confidence_and_says_transpose():
    X, Y = _attention(B=16, n=128, d=8, r=3, std=2.0)
    rec = recommend_rank(X.swapaxes(0, 1), Y.swapaxes(0, 1), no_static=True)
    assert rec.confidence not in CONFIDENT
    assert "transpose" in rec.report["recommendation"]["fix"]


def test_sharp_softmax_never_undercounts_with_a_confident_word():
    for std in (1.0, 16.0):
        X, Y = _attention(B=1024, n=32, d=16, r=5, std=std, seed=3)
        rec = recommend_rank(X, Y, no_static=True)
        assert rec.rank >= 5 or rec.confidence not in CONFIDENT, (std, rec.rank, rec.confidence)


def test_too_few_sequences_for_p_static_answer_with_p_attn():
    X, Y = _attention(B=64, n=12, d=8, r=2)  # B = 64 < n·d = 96
    rec = recommend_rank(X, Y)
    assert rec.report["predictors"]["P_static"]["status"].startswith("skipped")
    assert rec.predictor == "P_attn"


@given(
    st.lists(st.floats(0.0, 1.0, allow_nan=False), min_size=2, max_size=24),
    st.sampled_from(["floor", "energy_0.99", "energy_0.9"]),
)
def test_the_gap_never_exceeds_the_safe_rank(values, est):
    s = np.sort(np.asarray(values))[::-1]
    if s[0] <= 0:
        return
    est_all = {k: float(v) for k, v in all_estimators(s, extra=("floor",)).items()}
    out = gap_and_safe({"spectrum": s.tolist(), "estimates": est_all}, est)
    assert out["gap_rank"] <= out["safe_rank"]
    assert (out["gap_note"] is None) == (out["gap_rank"] == out["safe_rank"])
