"""The functional knee of a pretrained head (pretrained/knee.py, pretrained/measure.py): the
head's output recomputed at full rank is the forward pass's, and planted kernels give the knees
solved by hand under both truncations."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from tiny import BERT, LLAMA, MPNET, encoder_tensors, llama_tensors, write_model

from entropic_bound.pretrained import load_model
from entropic_bound.pretrained.knee import (
    METRICS,
    Head,
    error_curve,
    knee_of,
    plane_order,
    relative_error,
    rotate,
)
from entropic_bound.pretrained.llama import LlamaConfig, LlamaDecoder
from entropic_bound.pretrained.measure import heads_of, measure_head
from entropic_bound.pretrained.write import head_members, shared_members


def layer_members(model, ids, layer):
    fwd = model.forward(ids, capture=[layer], hidden=False)
    z = {"X": fwd.layers[layer].x.numpy(), "Y": fwd.layers[layer].y.numpy()}
    n = ids.shape[1]
    return z | dict(head_members(model, layer)) | dict(shared_members(model, n))


def encoder(tmp_path, cfg):
    return load_model(write_model(tmp_path / cfg["model_type"], cfg, encoder_tensors(cfg, 1)))


@pytest.mark.parametrize("family", ["bert", "mpnet", "llama"])
def test_full_rank_recomputes_the_forward_pass_output(tmp_path, family):
    if family == "llama":
        embed, norm, blocks = llama_tensors(LLAMA, 0)
        model = LlamaDecoder(LlamaConfig(**LLAMA), embed, norm, blocks)
    else:
        model = encoder(tmp_path, {"bert": BERT, "mpnet": MPNET}[family])
    ids = torch.randint(3, 20, (6, 9), generator=torch.Generator().manual_seed(0))
    z = layer_members(model, ids, 1)
    for head in heads_of(z, causal=family == "llama"):
        for metric in METRICS:
            ranks, err = error_curve(head, metric)
            assert ranks[-1] == head.d_head
            assert math.sqrt(err[-1].sum() / float((head.Y.double() ** 2).sum())) < 1e-5
            assert err[0].sum() > 0  # uniform attention is another output


def planted(causal=False, weak=None, seed=0):
    """A head on random tokens whose kernel has rank 3 (rows 3… of W_Q zero); ``weak``:
    (scale of coordinates 4…, size of a rank-2 kernel part that lives only there)."""
    g = torch.Generator().manual_seed(seed)
    K, n, d, dh = 12, 10, 12, 6
    X = torch.randn(K, n, d, generator=g, dtype=torch.float64)
    wq, wk = torch.randn(dh, d, generator=g).double(), torch.randn(dh, d, generator=g).double()
    wq[3:] = 0
    if weak is not None:
        scale, size = weak
        X[..., 4:] *= scale
        wq[:, 4:], wk[:, 4:] = 0, 0
        wq[:, :4], wk[:, :4] = wq[:, :4], wk[:, :4]
        wq[3:] = 0
        wq[1:3] = 0
        wq[4, 6], wk[4, 6], wq[5, 8], wk[5, 8] = size, size, size, size
    wv = torch.randn(dh, d, generator=g).double()
    bk, bv = torch.randn(dh, generator=g).double(), torch.randn(dh, generator=g).double()
    bq = torch.zeros(dh, dtype=torch.float64)
    logits = (X @ wq.T + bq) @ (X @ wk.T + bk).transpose(1, 2) * 0.5
    if causal:
        logits = logits.masked_fill(~torch.ones(n, n, dtype=torch.bool).tril(), -math.inf)
    Y = logits.softmax(-1) @ (X @ wv.T + bv)
    return Head(X, Y, wq, wk, wv, bq, bk, bv, 0.5, causal=causal)


@pytest.mark.parametrize("causal", [False, True])
def test_a_rank_three_kernel_has_knee_three_under_both_truncations(causal):
    head = planted(causal)
    for metric in METRICS:
        ranks, err = error_curve(head, metric)
        e = relative_error(err)
        assert e[0] == 1.0 and e[3] < 1e-20 and e[2] > 0.01
        assert knee_of(ranks, e, 0.01) == 3.0


def test_the_inputs_metric_skips_a_large_part_the_tokens_barely_excite():
    # W_Q has one row on the strong coordinates (rank 1 there) and two huge rows on coordinates
    # the tokens hardly move: plain SVD keeps the huge ones first (knee 3), the metric the
    # one that moves the logits (knee 1)
    head = planted(weak=(1e-4, 50.0))
    knees = {}
    for metric in METRICS:
        ranks, err = error_curve(head, metric)
        knees[metric] = knee_of(ranks, relative_error(err), 0.01)
    assert knees == {"plain": 3.0, "inputs_metric": 1.0}


def test_a_rotary_head_keeps_its_live_planes_first():
    g = torch.Generator().manual_seed(3)
    K, n, d, dh = 8, 10, 12, 6
    X = torch.randn(K, n, d, generator=g)
    wq, wk, wv = (torch.randn(dh, d, generator=g) for _ in range(3))
    wq[[1, 4]] = 0  # plane 1 of the query dead: two live planes
    ang = torch.arange(n)[:, None] * torch.tensor([0.3, 0.7, 1.1])
    cos, sin = torch.cat([ang, ang], 1).cos(), torch.cat([ang, ang], 1).sin()
    q, k = rotate(X @ wq.T, cos, sin), rotate(X @ wk.T, cos, sin)
    mask = ~torch.ones(n, n, dtype=torch.bool).tril()
    Y = ((q @ k.transpose(1, 2)) * 0.4).masked_fill(mask, -math.inf).softmax(-1) @ (X @ wv.T)
    head = Head(X, Y, wq, wk, wv, None, None, None, 0.4, causal=True, rope=(cos, sin))
    for metric in METRICS:
        assert plane_order(head, metric)[-1] == 1
        ranks, err = error_curve(head, metric)
        assert list(ranks) == [0, 2, 4, 6]
        e = relative_error(err)
        assert e[2] < 1e-10 and e[1] > 0.01
        assert knee_of(ranks, e, 0.01) == 4.0


def test_a_head_row_holds_its_halves_share_and_estimators():
    head = planted()
    row, curves = measure_head(head, predict=False)
    assert row["knee_plain"] == row["knee_plain_a"] == row["knee_plain_b"] == 3.0
    assert row["kernel_0.99"] <= 3 and 0 < row["ablation_share"]
    assert row["y_recompute_rel"] < 1e-12 and row["tolerance"] == 0.01
    assert len(curves) == 2 * (head.d_head + 1)
    assert {c["metric"] for c in curves} == set(METRICS)


def test_knee_of_reads_the_least_rank_under_the_tolerance():
    assert knee_of([0, 1, 2, 3], [1.0, 0.02, 0.01, 0.0], 0.01) == 2.0
    assert np.isnan(knee_of([0, 2, 4], [1.0, 0.5, 0.2], 0.01))
    assert np.isnan(relative_error(np.zeros((3, 4)))).all()


def test_a_head_predict_declines_is_recorded_as_refused(monkeypatch):
    import entropic_bound.predict as predict_pkg
    from entropic_bound.pretrained.measure import REFUSED, predicted

    def decline(*args, **kwargs):
        raise RuntimeError("singular token matrix (sequence 0 of the batch)")

    monkeypatch.setattr(predict_pkg, "recommend_rank", decline)
    row = predicted(planted())
    assert row["predict_word"] == REFUSED and np.isnan(row["predict_rank"])
    assert row["predict_note"] == "singular token matrix (sequence 0 of the batch)"
