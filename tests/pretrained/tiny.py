"""Tiny pretrained-model folders for the tests: config.json and model.safetensors written by hand
(the format's own layout, so that nothing beyond torch is needed), random weights by seed."""

from __future__ import annotations

import json
from pathlib import Path

import torch

from entropic_bound.pretrained.bert import BERT_LAYER
from entropic_bound.pretrained.gguf_file import GGUF_BLOCK
from entropic_bound.pretrained.mpnet import MPNetEncoder

#: torch dtype -> the format's name
NAMES = {
    torch.float64: "F64",
    torch.float32: "F32",
    torch.float16: "F16",
    torch.bfloat16: "BF16",
    torch.int64: "I64",
    torch.int32: "I32",
    torch.int16: "I16",
    torch.int8: "I8",
    torch.uint8: "U8",
    torch.bool: "BOOL",
}


def safetensors_bytes(tensors: dict[str, torch.Tensor], metadata: dict | None = None) -> bytes:
    """A .safetensors file: the header length, the JSON header (padded with spaces to 8 bytes,
    as the format's writer does), then each tensor's little-endian bytes in name order."""
    header, chunks, at = {}, [], 0
    for name in sorted(tensors):
        t = tensors[name].contiguous()
        raw = t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""
        header[name] = {
            "dtype": NAMES[t.dtype],
            "shape": list(t.shape),
            "data_offsets": [at, at + len(raw)],
        }
        chunks.append(raw)
        at += len(raw)
    if metadata is not None:
        header["__metadata__"] = metadata
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return len(text).to_bytes(8, "little") + text + b"".join(chunks)


def write_safetensors(path: Path, tensors: dict[str, torch.Tensor], metadata=None) -> Path:
    path.write_bytes(safetensors_bytes(tensors, metadata))
    return path


BERT = {
    "model_type": "bert",
    "architectures": ["BertModel"],
    "hidden_size": 8,
    "num_attention_heads": 2,
    "num_hidden_layers": 2,
    "intermediate_size": 12,
    "vocab_size": 20,
    "max_position_embeddings": 16,
    "type_vocab_size": 2,
    "layer_norm_eps": 1e-12,
    "hidden_act": "gelu",
}
MPNET = {
    "model_type": "mpnet",
    "architectures": ["MPNetModel"],
    "hidden_size": 8,
    "num_attention_heads": 2,
    "num_hidden_layers": 2,
    "intermediate_size": 12,
    "vocab_size": 20,
    "max_position_embeddings": 18,
    "relative_attention_num_buckets": 32,
    "layer_norm_eps": 1e-5,
    "hidden_act": "gelu",
}
# the checkpoint names the library reads (a wrong name there fails the reference tests against
# transformers, which write their own checkpoints)
LAYER_NAMES = {"bert": BERT_LAYER, "mpnet": MPNetEncoder.LAYER}


def encoder_tensors(cfg: dict, seed: int = 0) -> dict[str, torch.Tensor]:
    """Random weights of every tensor a BERT or MPNet encoder of ``cfg`` reads (N(0, 0.3²);
    LayerNorm gains near 1)."""
    g = torch.Generator().manual_seed(seed)
    d, f = cfg["hidden_size"], cfg["intermediate_size"]

    def r(*shape):
        return 0.3 * torch.randn(*shape, generator=g)

    out = {
        "embeddings.word_embeddings.weight": r(cfg["vocab_size"], d),
        "embeddings.position_embeddings.weight": r(cfg["max_position_embeddings"], d),
        "embeddings.LayerNorm.weight": 1 + r(d),
        "embeddings.LayerNorm.bias": r(d),
    }
    kind = cfg["model_type"]
    if kind == "bert":
        out["embeddings.token_type_embeddings.weight"] = r(cfg["type_vocab_size"], d)
    else:
        out["encoder.relative_attention_bias.weight"] = r(
            cfg["relative_attention_num_buckets"], cfg["num_attention_heads"]
        )
    sizes = {"q": (d, d), "k": (d, d), "v": (d, d), "o": (d, d), "ff1": (f, d), "ff2": (d, f)}
    for i in range(cfg["num_hidden_layers"]):
        for role, name in LAYER_NAMES[kind].items():
            at = f"encoder.layer.{i}.{name}"
            if role.startswith("ln"):
                out[f"{at}.weight"], out[f"{at}.bias"] = 1 + r(d), r(d)
            else:
                out[f"{at}.weight"], out[f"{at}.bias"] = r(*sizes[role]), r(sizes[role][0])
    return out


def write_model(folder: Path, cfg: dict, tensors=None, tokenizer: str = "{}") -> Path:
    """A model folder: config.json, model.safetensors (``tensors``, or random ones for ``cfg``)
    and tokenizer.json (``tokenizer``'s text: the layout only needs it present)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(cfg))
    write_safetensors(
        folder / "model.safetensors", encoder_tensors(cfg) if tensors is None else tensors
    )
    (folder / "tokenizer.json").write_text(tokenizer)
    return folder


LLAMA = {
    "layers": 2,
    "heads": 4,
    "kv_heads": 2,
    "d_model": 16,
    "d_ff": 24,
    "vocab": 30,
    "context": 32,
    "eps": 2.0**-17,  # a float32 exactly, as GGUF stores it
    "rope_base": 10000.0,
}


def llama_tensors(cfg: dict, seed: int = 0):
    """Random (embed, norm, blocks) of a Llama-style decoder of ``cfg`` (a LlamaConfig's fields),
    blocks in the rotate-half row order of the reference implementation."""
    from entropic_bound.pretrained.llama import LlamaConfig

    c = LlamaConfig(**cfg)
    g = torch.Generator().manual_seed(seed)

    def r(*shape):
        return 0.3 * torch.randn(*shape, generator=g)

    blocks = [
        {k: (1 + r(*s) if k.endswith("norm") else r(*s)) for k, s in c.shapes().items()}
        for _ in range(c.layers)
    ]
    return r(c.vocab, c.d_model), 1 + r(c.d_model), blocks


def interleave(w: torch.Tensor, heads: int) -> torch.Tensor:
    """llama.cpp's converter on a query or key map: each head's rows (k, k + d/2) made
    neighbours (2k, 2k+1), the order its rotation pairs coordinates in."""
    rows = w.shape[0]
    return w.reshape(heads, 2, rows // heads // 2, -1).transpose(1, 2).reshape(w.shape)


GGUF_ROLES = GGUF_BLOCK


def write_gguf(path: Path, cfg: dict, tensors, arch="llama", meta=None, extra=None, tokens=None):
    """A Llama GGUF file as llama.cpp's converter writes one: the settings as metadata (``meta``
    overrides or, with None, drops a key), float32 tensors, queries and keys interleaved;
    ``extra``: more tensors by name; ``tokens``: (tokens, merges, types, pre) of a tokenizer."""
    import gguf
    import numpy as np

    embed, norm, blocks = tensors
    w = gguf.GGUFWriter(str(path), arch)
    keys = {
        f"{arch}.block_count": cfg["layers"],
        f"{arch}.context_length": cfg["context"],
        f"{arch}.embedding_length": cfg["d_model"],
        f"{arch}.feed_forward_length": cfg["d_ff"],
        f"{arch}.attention.head_count": cfg["heads"],
        f"{arch}.attention.head_count_kv": cfg["kv_heads"],
        f"{arch}.attention.layer_norm_rms_epsilon": float(cfg["eps"]),
        f"{arch}.rope.freq_base": float(cfg["rope_base"]),
        f"{arch}.rope.dimension_count": cfg["d_model"] // cfg["heads"],
    } | (meta or {})
    for key, value in keys.items():
        if value is None:
            continue
        if isinstance(value, str):
            w.add_string(key, value)
        elif isinstance(value, float):
            w.add_float32(key, value)
        else:
            w.add_uint32(key, value)
    if tokens is not None:
        vocab, merges, types, pre = tokens
        w.add_tokenizer_model("gpt2")
        w.add_tokenizer_pre(pre)
        w.add_token_list(vocab)
        w.add_token_merges(merges)
        w.add_token_types(types)
    named = {"token_embd.weight": embed, "output_norm.weight": norm}
    for i, b in enumerate(blocks):
        for role, name in GGUF_ROLES.items():
            t = b[role]
            if role in ("q", "k"):
                t = interleave(t, cfg["heads"] if role == "q" else cfg["kv_heads"])
            named[f"blk.{i}.{name}.weight"] = t
    named |= extra or {}
    for name, t in named.items():
        if isinstance(t, tuple):  # (blocks as uint8 [rows, bytes per row], quantisation type)
            w.add_tensor(name, t[0], raw_dtype=t[1])
        else:
            w.add_tensor(name, np.ascontiguousarray(t.numpy(), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path
