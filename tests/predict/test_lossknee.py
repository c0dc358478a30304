"""The loss knee from data alone (predict/lossknee.py): exact on softmax heads solved by hand."""

import math

import numpy as np
import pytest

from entropic_bound.predict.lossknee import loss_knee


def _head(rng, B, n, d, dv, singular, causal, std):
    """Y = softmax(X A Xᵀ (+ mask)) X V with A of the given singular values (logit std ``std``)."""
    U = np.linalg.qr(rng.standard_normal((d, len(singular))))[0]
    W = np.linalg.qr(rng.standard_normal((d, len(singular))))[0]
    A = U @ np.diag(singular) @ W.T
    X = rng.standard_normal((B, n, d))
    logits = X @ A @ X.transpose(0, 2, 1)
    logits *= std / logits.std()
    if causal:
        logits = np.where(np.tril(np.ones((n, n), bool)), logits, -np.inf)
    P = np.exp(logits - logits.max(-1, keepdims=True))
    P /= P.sum(-1, keepdims=True)
    return X, P @ X @ rng.standard_normal((d, dv))


@pytest.mark.parametrize("causal", [False, True])
def test_a_rank_3_head_has_loss_knee_3(causal):
    """Rank 3 with well-separated directions: rank 3 fits the held-out outputs exactly, rank 2
    leaves far more than 1 % of the ablation gap, so the knee is 3; rank 0 (uniform attention)
    is the ablation, and a rank above the knee fits as well as the full rank."""
    X, Y = _head(np.random.default_rng(3), 256, 16, 8, 4, [1.0, 0.8, 0.6], causal, 2.0)
    k = loss_knee(X, Y, causal=causal, max_iter=200)
    assert k.knee == 3
    gap = k.ablated - k.full
    assert k.full < 1e-6 * k.ablated and k.losses[2] - k.full > 0.01 * gap


def test_uniform_attention_has_no_knee():
    """A head whose logits are all zero is its own ablation: no gap, no knee."""
    X, Y = _head(np.random.default_rng(4), 128, 8, 4, 2, [1.0], False, 0.0)
    assert math.isnan(loss_knee(X, Y, max_iter=50).knee)


def test_too_few_sequences_or_constant_tokens_are_refused():
    X, Y = _head(np.random.default_rng(5), 2, 8, 4, 2, [1.0], False, 1.0)
    with pytest.raises(ValueError, match="at least 3 sequences"):
        loss_knee(X, Y)
    with pytest.raises(ValueError, match="do not vary"):
        loss_knee(np.ones((16, 8, 4)), np.ones((16, 8, 2)))
