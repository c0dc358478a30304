"""The Llama-style decoder and its GGUF files: answers solved by hand (rotation angles, blind
heads average the keys up to the query, shared by the heads of a group, a Q4_1 block
dequantised), the converter's interleaving undone, every damaged or unsupported file one line,
and, where transformers is installed, its LlamaModel on the same random weights."""

import pytest
import torch
from reference import max_differences, reference_forward
from tiny import LLAMA, interleave, llama_tensors, write_gguf

from entropic_bound.pretrained import PretrainedError, load_model
from entropic_bound.pretrained.gguf_file import unpermute
from entropic_bound.pretrained.llama import LlamaConfig, LlamaDecoder


def decoder(cfg=LLAMA, seed=0, blind=False) -> LlamaDecoder:
    embed, norm, blocks = llama_tensors(cfg, seed)
    if blind:  # layer 0: queries and keys zero, each key/value head's values the identity
        c = LlamaConfig(**cfg)
        blocks[0]["q"].zero_()
        blocks[0]["k"].zero_()
        blocks[0]["v"] = torch.eye(c.d_model)[: c.kv_heads * c.d_head]
    return LlamaDecoder(LlamaConfig(**cfg), embed, norm, blocks)


def test_rotation_angles_solved_by_hand():
    cos, sin = decoder(LLAMA | {"rope_base": 16.0}).rope(3)  # d_head 4: frequencies 1, 1/4
    angles = torch.tensor([[0, 0], [1, 0.25], [2, 0.5]])
    assert torch.allclose(cos, torch.cat([angles, angles], 1).cos())
    assert torch.allclose(sin, torch.cat([angles, angles], 1).sin())


def test_blind_heads_average_the_keys_up_to_the_query_shared_within_a_group():
    model = decoder(blind=True)
    ids = torch.tensor([[3, 1, 4, 1, 5], [9, 2, 6, 5, 0]])
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]])
    out = model.forward(ids, mask, capture=[0])
    x, y = out.layers[0].x, out.layers[0].y  # heads 0, 1 read key/value head 0; 2, 3 head 1
    assert out.causal and y.shape == (2, 4, 5, 4)
    for b in range(2):
        for i in range(5):
            keys = [j for j in range(i + 1) if mask[b, j]]
            for h in range(4):
                kv = h // 2
                want = x[b, keys, 4 * kv : 4 * kv + 4].mean(0)
                assert torch.allclose(y[b, h, i], want, atol=1e-6), (b, i, h)


def test_head_weights_are_the_rows_of_the_head_and_of_its_key_value_head():
    model = decoder()
    w = model.head_weights(1, 3)
    assert torch.equal(w.w_q, model.blocks[1]["q"][12:16])
    assert torch.equal(w.w_k, model.blocks[1]["k"][4:8])  # head 3 reads key/value head 1
    assert w.b_q is None and w.scale == 0.5
    with pytest.raises(PretrainedError, match="head 1.4 does not exist"):
        model.head_weights(1, 4)


def test_padding_must_follow_the_tokens_and_changes_nothing_before_it():
    model = decoder()
    ids = torch.tensor([[3, 1, 4, 1, 5]])
    with pytest.raises(PretrainedError, match="padding before a token; pad after the tokens"):
        model.forward(ids, torch.tensor([[0, 1, 1, 1, 1]]))
    padded = model.forward(ids, torch.tensor([[1, 1, 1, 0, 0]]), capture=[1])
    alone = model.forward(ids[:, :3], capture=[1])
    assert torch.allclose(padded.hidden[:, :3], alone.hidden, atol=1e-6)
    # causal: the first three tokens never see the last two, padding or not
    assert torch.allclose(model.forward(ids).hidden[:, :3], alone.hidden, atol=1e-6)


def test_the_converters_interleaving_is_undone():
    w = torch.arange(2 * 8 * 3).float().view(16, 3)  # 2 heads of 8 rows
    assert torch.equal(unpermute(interleave(w, 2), 2), w)
    # head 0's rows 0 … 7 in the file: 0, 4, 1, 5, 2, 6, 3, 7 (k beside k + d/2)
    assert interleave(w, 2)[:8, 0].tolist() == [0, 12, 3, 15, 6, 18, 9, 21]


def test_the_reference_llama_agrees_on_tiny_random_weights():
    transformers = pytest.importorskip("transformers")
    model = decoder()
    c = model.cfg
    hf_cfg = transformers.LlamaConfig(
        hidden_size=c.d_model,
        intermediate_size=c.d_ff,
        num_hidden_layers=c.layers,
        num_attention_heads=c.heads,
        num_key_value_heads=c.kv_heads,
        vocab_size=c.vocab,
        max_position_embeddings=c.context,
        rms_norm_eps=c.eps,
        rope_parameters={"rope_type": "default", "rope_theta": c.rope_base},
    )
    hf_cfg._attn_implementation = "eager"
    ref = transformers.LlamaModel(hf_cfg).eval()
    names = {"attn_norm": "input_layernorm", "ffn_norm": "post_attention_layernorm"}
    names |= {r: f"self_attn.{r}_proj" for r in "qkvo"}
    names |= {r: f"mlp.{r}_proj" for r in ("gate", "up", "down")}
    state = {"embed_tokens.weight": model.embed, "norm.weight": model.norm}
    for i, b in enumerate(model.blocks):
        state |= {f"layers.{i}.{names[r]}.weight": t for r, t in b.items()}
    ref.load_state_dict(state, strict=True)
    g = torch.Generator().manual_seed(2)
    ids = torch.randint(0, c.vocab, (3, 11), generator=g)
    mask = torch.ones_like(ids)
    mask[1, 7:] = 0
    hidden, caps = reference_forward(ref, "llama", ids, mask, c.heads, c.d_head)
    worst = max_differences(model.forward(ids, mask, capture="all"), hidden, caps, mask)
    assert max(worst.values()) <= 1e-5, worst


# --- GGUF files (the gguf package writes them, as llama.cpp's converter would) ---


@pytest.fixture
def gguf():
    return pytest.importorskip("gguf")


def test_a_gguf_file_reads_back_the_weights_it_was_written_from(tmp_path, gguf):
    tensors = llama_tensors(LLAMA, seed=4)
    path = write_gguf(tmp_path / "m.gguf", LLAMA, tensors)
    model = load_model(path)
    assert model.files.format == "gguf" and load_model(tmp_path).files.weights == path
    assert model.cfg == LlamaConfig(**LLAMA)
    embed, norm, blocks = tensors
    assert torch.equal(model.embed, embed) and torch.equal(model.norm, norm)
    for mine, want in zip(model.blocks, blocks):
        assert all(torch.equal(mine[r], want[r]) for r in want)
    ids = torch.tensor([[1, 2, 3, 4]])
    direct = LlamaDecoder(LlamaConfig(**LLAMA), *tensors).forward(ids).hidden
    assert torch.equal(model.forward(ids).hidden, direct)


def test_a_q4_1_block_is_dequantised_as_solved_by_hand(tmp_path, gguf):
    """Q4_1: per 32 values a float16 scale d and offset m, then 16 bytes whose low nibbles are
    values 0 … 15 and high nibbles values 16 … 31; a value is d · q + m."""
    import numpy as np

    cfg = LLAMA | {"d_model": 32, "heads": 4, "kv_heads": 2, "vocab": 2}
    nibbles = np.arange(16, dtype=np.uint8) | ((15 - np.arange(16, dtype=np.uint8)) << 4)
    rows = [
        np.concatenate([np.array([0.5, -1.0], np.float16).view(np.uint8), nibbles]),
        np.concatenate([np.array([2.0, 0.25], np.float16).view(np.uint8), nibbles]),
    ]
    q = np.concatenate([np.arange(16), 15 - np.arange(16)])
    embed, norm, blocks = llama_tensors(cfg)
    extra = {"token_embd.weight": (np.stack(rows), gguf.GGMLQuantizationType.Q4_1)}
    model = load_model(write_gguf(tmp_path / "m.gguf", cfg, (embed, norm, blocks), extra=extra))
    assert model.embed.tolist() == [(0.5 * q - 1).tolist(), (2.0 * q + 0.25).tolist()]


@pytest.mark.parametrize(
    "arch, meta, extra, why",
    [
        ("gpt2", {}, {}, "architecture 'gpt2' is not supported"),
        ("llama", {"llama.block_count": None}, {}, "metadata llama.block_count is missing"),
        ("llama", {"llama.block_count": 3}, {}, "no tensor blk.2.attn_k.weight"),
        ("llama", {"llama.attention.head_count_kv": 3}, {}, "do not divide evenly"),
        ("llama", {"llama.rope.dimension_count": 2}, {}, "rope.dimension_count differs"),
        ("llama", {"llama.rope.scaling.type": "linear"}, {}, "rotary scaling 'linear'"),
        ("llama", {"llama.context_length": "long"}, {}, "context_length is 'long', not a positive"),
        ("llama", {}, {"blk.0.attn_q.bias": torch.zeros(16)}, "attn_q.bias is not in a plain"),
    ],
)
def test_an_unsupported_or_inconsistent_gguf_is_one_line(tmp_path, gguf, arch, meta, extra, why):
    if arch != "llama":  # the same keys under the other architecture's name
        meta = {k.replace("llama.", f"{arch}."): v for k, v in meta.items()}
    path = write_gguf(tmp_path / "m.gguf", LLAMA, llama_tensors(LLAMA), arch, meta, extra)
    with pytest.raises(PretrainedError, match=why) as err:
        load_model(path)
    assert "\n" not in str(err.value)


def test_a_truncated_gguf_is_one_line(tmp_path, gguf):
    path = write_gguf(tmp_path / "m.gguf", LLAMA, llama_tensors(LLAMA))
    raw = path.read_bytes()
    for cut in (3, 40, len(raw) // 2, len(raw) - 1):
        path.write_bytes(raw[:cut])
        with pytest.raises(PretrainedError, match="is not a readable .gguf file") as err:
            load_model(path)
        assert "\n" not in str(err.value)


def test_the_gguf_tokenizer_splits_digits_one_by_one(tmp_path, gguf):
    """SmolLM's split (llama.cpp's "smollm"): every digit alone, then GPT-2's split; the
    merges join "a"+"b" but never "1"+"2"."""
    pytest.importorskip("tokenizers")
    from entropic_bound.pretrained import windows

    vocab = ["<unk>", "<|end|>", "a", "b", "1", "2", "Ġ", "ab", "Ġa", "12"]
    merges = ["a b", "Ġ a", "1 2"]
    types = [2, 3] + [1] * 8  # <|end|> a control token
    path = write_gguf(
        tmp_path / "m.gguf", LLAMA, llama_tensors(LLAMA), tokens=(vocab, merges, types, "smollm")
    )
    model = load_model(path)
    # "ab", " a" merged; "1", "2" alone; the control token whole; "b" "a" not merged
    assert windows(model, "ab a12<|end|>ba", 7).tolist() == [[7, 8, 4, 5, 1, 3, 2]]
    assert windows(model, "ab a12<|end|>ba", 3).tolist() == [[7, 8, 4], [5, 1, 3]]
