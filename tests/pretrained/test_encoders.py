"""BERT and MPNet forward passes on tiny weights: answers solved by hand (blind heads average the
real tokens, MPNet's buckets and its attend-to-the-next-token head), what is captured, and,
where transformers is installed, the reference's own classes on the same random weights."""

import math

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from reference import load_reference, max_differences, reference_forward
from tiny import BERT, MPNET, encoder_tensors, write_model

from entropic_bound.pretrained import PretrainedError, load_model
from entropic_bound.pretrained.mpnet import relative_bucket


def layer_norm(v, g, b, eps):
    mean = v.mean(-1, keepdim=True)
    var = ((v - mean) ** 2).mean(-1, keepdim=True)
    return (v - mean) / torch.sqrt(var + eps) * g + b


def blind_heads(cfg: dict, layer: int = 0) -> dict:
    """Random weights but layer ``layer``'s queries and keys zero and its values the identity:
    every logit is 0 (plus MPNet's bias), so a head's output is an average of its slice of X."""
    t = encoder_tensors(cfg, seed=1)
    at = "attention.self" if cfg["model_type"] == "bert" else "attention.attn"
    q, k, v = ("query", "key", "value") if cfg["model_type"] == "bert" else ("q", "k", "v")
    d = cfg["hidden_size"]
    for m in (q, k):
        t[f"encoder.layer.{layer}.{at}.{m}.weight"] = torch.zeros(d, d)
        t[f"encoder.layer.{layer}.{at}.{m}.bias"] = torch.zeros(d)
    t[f"encoder.layer.{layer}.{at}.{v}.weight"] = torch.eye(d)
    t[f"encoder.layer.{layer}.{at}.{v}.bias"] = torch.zeros(d)
    return t


def test_bert_embeddings_and_blind_heads_solved_by_hand(tmp_path):
    t = blind_heads(BERT)
    model = load_model(write_model(tmp_path / "m", BERT, t))
    ids = torch.tensor([[3, 1, 4, 1, 5], [9, 2, 6, 0, 0]])
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]])
    out = model.forward(ids, mask, capture=[0])
    # X of layer 0: LayerNorm of word + position + segment 0
    e = t["embeddings.word_embeddings.weight"][ids] + t["embeddings.position_embeddings.weight"][:5]
    e = e + t["embeddings.token_type_embeddings.weight"][0]
    x = layer_norm(e, t["embeddings.LayerNorm.weight"], t["embeddings.LayerNorm.bias"], 1e-12)
    assert torch.allclose(out.layers[0].x, x, atol=1e-6)
    # every query of head h: the mean of head h's slice of X over the real keys alone
    y = out.layers[0].y
    assert y.shape == (2, 2, 5, 4)
    for b, real in ((0, 5), (1, 3)):
        for h in range(2):
            mean = x[b, :real, 4 * h : 4 * h + 4].mean(0)
            assert torch.allclose(y[b, h], mean.expand(5, 4), atol=1e-6)


@pytest.mark.parametrize(
    "relative, bucket",
    [
        (0, 0),
        (-1, 1),  # the key one token before the query
        (1, 17),  # one after: the second half
        (-7, 7),  # the last exact distance
        (7, 23),
        (-12, 9),  # 8 + ⌊8 log(12/8) / log 16⌋ = 8 + ⌊1.17⌋
        (-20, 10),  # ⌊2.64⌋
        (40, 28),  # 16 + 8 + ⌊4.64⌋
        (-100, 15),  # ⌊7.29⌋
        (-127, 15),
        (-1000, 15),  # the last bucket beyond 128
        (1000, 31),
    ],
)
def test_mpnet_buckets_solved_by_hand(relative, bucket):
    assert relative_bucket(torch.tensor([relative])).item() == bucket


def test_mpnet_buckets_agree_with_the_reference():
    modeling = pytest.importorskip("transformers.models.mpnet.modeling_mpnet")
    rel = torch.arange(-700, 701)
    theirs = modeling.MPNetEncoder.relative_position_bucket(rel, num_buckets=32)
    assert torch.equal(relative_bucket(rel), theirs)


def test_mpnet_head_that_reads_the_next_token_solved_by_hand(tmp_path):
    t = blind_heads(MPNET)
    table = torch.full((32, 2), -1e4)
    table[17] = 0.0  # the bucket of "the key one token after the query", both heads
    t["encoder.relative_attention_bias.weight"] = table
    model = load_model(write_model(tmp_path / "m", MPNET, t))
    ids = torch.tensor([[5, 6, 7, 8, 1, 1]])  # 1: the padding id, at the padding position
    out = model.forward(ids, capture=[0])
    # X: LayerNorm of word + position, positions counted from 2 over the non-padding tokens
    positions = torch.tensor([2, 3, 4, 5, 1, 1])
    e = (
        t["embeddings.word_embeddings.weight"][ids]
        + t["embeddings.position_embeddings.weight"][positions]
    )
    x = layer_norm(e, t["embeddings.LayerNorm.weight"], t["embeddings.LayerNorm.bias"], 1e-5)
    assert torch.allclose(out.layers[0].x, x, atol=1e-6)
    y = out.layers[0].y[0]
    for h in range(2):
        assert torch.allclose(y[h, :5], x[0, 1:, 4 * h : 4 * h + 4], atol=1e-6)
        # the last token has no next one: every bias equal, a plain average
        assert torch.allclose(y[h, 5], x[0, :, 4 * h : 4 * h + 4].mean(0), atol=1e-6)
    assert out.position_bias.shape == (2, 6, 6) and out.position_bias[0, 2, 3] == 0.0


@pytest.mark.parametrize("cfg", [BERT, MPNET], ids=["bert", "mpnet"])
def test_what_is_captured_does_not_change_the_answer(tmp_path, cfg):
    model = load_model(write_model(tmp_path / "m", cfg))
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(2, 20, (5, 7), generator=g)
    full = model.forward(ids, capture="all", batch=5)
    assert sorted(full.layers) == [0, 1]
    # the next layer's X is this layer's output; the last layer's output is the hidden state
    assert torch.equal(model.forward(ids, capture=[0], hidden=False).layers[0].y, full.layers[0].y)
    early = model.forward(ids, capture=[0], hidden=False)
    assert early.hidden is None and list(early.layers) == [0]
    one_by_one = model.forward(ids, capture=[1], batch=1)
    assert torch.allclose(one_by_one.hidden, full.hidden, atol=1e-6)
    assert torch.allclose(one_by_one.layers[1].x, full.layers[1].x, atol=1e-6)
    assert torch.allclose(one_by_one.layers[1].y, full.layers[1].y, atol=1e-6)
    w = model.head_weights(1, 1)
    assert torch.equal(w.w_q, model.blocks[1]["q"][0][4:8]) and torch.equal(
        w.b_k, model.blocks[1]["k"][1][4:8]
    )
    assert w.scale == 1 / math.sqrt(4)


@given(st.integers(1, 4), st.integers(1, 8), st.integers(0, 2**16))
def test_padding_changes_nothing_on_the_real_tokens(tmp_path_factory, batch, real, seed):
    """A window padded after its ``real`` tokens answers, on those tokens, as the window alone."""
    model = load_model(write_model(tmp_path_factory.mktemp("m"), BERT))
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(1, 20, (batch, real), generator=g)
    alone = model.forward(ids, capture=[1])
    padded = torch.cat([ids, torch.zeros(batch, 3, dtype=torch.int64)], 1)
    mask = torch.cat([torch.ones(batch, real), torch.zeros(batch, 3)], 1)
    out = model.forward(padded, mask, capture=[1])
    assert torch.allclose(out.hidden[:, :real], alone.hidden, atol=1e-5)
    assert torch.allclose(out.layers[1].y[:, :, :real], alone.layers[1].y, atol=1e-5)


@pytest.mark.parametrize(
    "ids, mask, capture, why",
    [
        (torch.tensor([[1, 20]]), None, None, "token id 20 is outside the vocabulary of 20"),
        (torch.tensor([[1, -1]]), None, None, "token id -1 is outside"),
        (
            torch.ones(1, 17, dtype=torch.int64),
            None,
            None,
            "windows of 17 tokens: the model takes at most 16",
        ),
        (torch.tensor([1, 2]), None, None, "need \\[windows, tokens\\]"),
        (torch.tensor([[1.0, 2.0]]), None, None, "need integers"),
        (torch.tensor([[1, 2]]), torch.tensor([[0, 0]]), None, "a window has no token unmasked"),
        (torch.tensor([[1, 2]]), torch.tensor([[1, 2]]), None, "values other than 0 and 1"),
        (torch.tensor([[1, 2]]), torch.tensor([[1]]), None, "attention mask of shape \\[1, 1\\]"),
        (torch.tensor([[1, 2]]), None, [2], "capture layer 2 does not exist"),
    ],
)
def test_requests_the_model_cannot_answer_are_one_line(tmp_path, ids, mask, capture, why):
    model = load_model(write_model(tmp_path / "m", BERT))
    with pytest.raises(PretrainedError, match=why):
        model.forward(ids, mask, capture=capture)
    with pytest.raises(PretrainedError, match="head 2.0 does not exist"):
        model.head_weights(2, 0)


@pytest.mark.parametrize("cfg", [BERT, MPNET], ids=["bert", "mpnet"])
def test_tiny_random_encoders_agree_with_the_reference(tmp_path, cfg):
    """transformers' class, reading the same file, to 1e-5 on every layer's X and Y (one window
    padded: BERT's padding id 0, MPNet's 1)."""
    pytest.importorskip("transformers")
    folder = write_model(tmp_path / "m", cfg)
    ours = load_model(folder)
    ref = load_reference(folder)
    pad = 0 if cfg["model_type"] == "bert" else 1
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(2, 20, (3, 9), generator=g)
    mask = torch.ones_like(ids)
    ids[1, 6:], mask[1, 6:] = pad, 0
    hidden, caps = reference_forward(ref, cfg["model_type"], ids, mask, 2, 4)
    worst = max_differences(ours.forward(ids, mask, capture="all"), hidden, caps, mask)
    assert max(worst.values()) <= 1e-5, worst
