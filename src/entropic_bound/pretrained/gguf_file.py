"""A Llama-style decoder (:mod:`.llama`) from one GGUF file, llama.cpp's format: the settings
from its metadata, every weight dequantised to float32 by the ``gguf`` package's reader and
checked against the settings.

llama.cpp's converter interleaves each query and key head's rows (pairs (2k, 2k+1) for its
rotation); they are put back in the "rotate half" order (k, k + d_head/2) of the reference
implementation, so that a head's rows are the reference's rows. The output projection onto the
vocabulary is not read: the forward pass stops at the final norm.
"""

from __future__ import annotations

import numpy as np
import torch

from entropic_bound.pretrained.errors import PretrainedError, need
from entropic_bound.pretrained.llama import BLOCK, LlamaConfig, LlamaDecoder

#: a block role -> its GGUF tensor name under ``blk.<l>.``
GGUF_BLOCK = {
    "attn_norm": "attn_norm",
    "q": "attn_q",
    "k": "attn_k",
    "v": "attn_v",
    "o": "attn_output",
    "ffn_norm": "ffn_norm",
    "gate": "ffn_gate",
    "up": "ffn_up",
    "down": "ffn_down",
}
#: tensors read beside the blocks, and those a plain Llama file may hold that are not needed
TOP = ("token_embd.weight", "output_norm.weight")
UNUSED = ("output.weight",)
#: llama.cpp's default rotary base, for a file that does not name one
ROPE_BASE = 10000.0
_REQUIRED = object()


def open_gguf(path):
    """The ``gguf.GGUFReader`` of ``path`` (memory-mapped; nothing dequantised yet)."""
    gguf = need("gguf", "reading .gguf files")
    try:
        reader = gguf.GGUFReader(str(path))
    except Exception as exc:  # noqa: BLE001 - damage shows as ValueError, IndexError, OSError …
        raise PretrainedError(
            f"{path} is not a readable .gguf file ({type(exc).__name__}: "
            f"{' '.join(str(exc).split())[:200]})",
            "download or unpack it again (a partial copy is the usual cause)",
        ) from None
    if reader.byte_order != "I":
        raise PretrainedError(f"{path} was written for the other byte order", "convert it again")
    return reader


def meta(reader, path, key: str, kind: type, default=_REQUIRED):
    """Metadata ``key`` as ``kind`` (int, float, str or bool), or ``default`` when absent."""
    field = reader.fields.get(key)
    if field is None:
        if default is _REQUIRED:
            raise PretrainedError(
                f"{path}: metadata {key} is missing", "convert the model again with llama.cpp"
            )
        return default
    try:
        value = field.contents()
    except Exception:  # noqa: BLE001 - a field of another type than it claims
        value = None
    if kind is float and type(value) in (int, float):
        value = float(value)
    if type(value) is not kind or (kind is int and value < 1):
        want = "a positive integer" if kind is int else f"a {kind.__name__}"
        raise PretrainedError(
            f"{path}: metadata {key} is {value!r}, not {want}",
            "convert the model again with llama.cpp",
        )
    return value


def llama_config(reader, path) -> LlamaConfig:
    """The :class:`.llama.LlamaConfig` of a GGUF file's metadata, checked."""
    arch = meta(reader, path, "general.architecture", str)
    if arch != "llama":
        raise PretrainedError(
            f"{path}: architecture {arch!r} is not supported",
            "supported in .gguf files: llama (and bert, mpnet as safetensors folders)",
        )

    def get(key, kind, default=_REQUIRED):
        return meta(reader, path, f"llama.{key}", kind, default)

    heads = get("attention.head_count", int)
    cfg = LlamaConfig(
        layers=get("block_count", int),
        heads=heads,
        kv_heads=get("attention.head_count_kv", int, heads),
        d_model=get("embedding_length", int),
        d_ff=get("feed_forward_length", int),
        vocab=0,  # from the embedding table (below)
        context=get("context_length", int),
        eps=get("attention.layer_norm_rms_epsilon", float),
        rope_base=get("rope.freq_base", float, ROPE_BASE),
    )
    if cfg.d_model % heads or heads % cfg.kv_heads:
        raise PretrainedError(
            f"{path}: {cfg.d_model} dimensions, {heads} heads and {cfg.kv_heads} key/value heads "
            "do not divide evenly",
            "convert the model again with llama.cpp",
        )
    for key in ("rope.dimension_count", "attention.key_length", "attention.value_length"):
        if get(key, int, cfg.d_head) != cfg.d_head:
            raise PretrainedError(
                f"{path}: llama.{key} differs from d_head {cfg.d_head}",
                "only heads of hidden size / heads, fully rotated, are implemented",
            )
    scaling = get("rope.scaling.type", str, "none")
    if scaling != "none" or get("expert_count", int, None) is not None:
        raise PretrainedError(
            f"{path}: {'rotary scaling ' + repr(scaling) if scaling != 'none' else 'experts'} "
            "are not implemented",
            "use a plain Llama model",
        )
    return cfg


def unpermute(w: torch.Tensor, heads: int) -> torch.Tensor:
    """Rows of ``heads`` heads from llama.cpp's interleaved order to "rotate half" order."""
    rows = w.shape[0]
    return w.reshape(heads, rows // heads // 2, 2, -1).transpose(1, 2).reshape(w.shape)


def _dequantised(gguf, path, t, shape: tuple[int, ...]) -> torch.Tensor:
    try:
        values = gguf.dequantize(t.data, t.tensor_type)
    except NotImplementedError:
        raise PretrainedError(
            f"{path}: tensor {t.name} is stored as {t.tensor_type.name}, which cannot be read",
            "convert the model with another quantisation",
        ) from None
    if tuple(values.shape) != shape:
        raise PretrainedError(
            f"{path}: tensor {t.name} has shape {list(values.shape)}, the metadata gives "
            f"{list(shape)}",
            "convert the model again with llama.cpp",
        )
    # a float32 tensor is a view of the mapped file: copied; a dequantised one is already new
    return torch.from_numpy(np.require(values, np.float32, ["C", "W", "O"]))


def load_gguf(path) -> LlamaDecoder:
    """The decoder of the GGUF file at ``path``, every weight read and checked."""
    gguf = need("gguf", "reading .gguf files")
    reader = open_gguf(path)
    cfg = llama_config(reader, path)
    tensors = {t.name: t for t in reader.tensors}
    wanted = {f"blk.{i}.{GGUF_BLOCK[r]}.weight" for i in range(cfg.layers) for r in BLOCK}
    wanted |= set(TOP)
    missing = sorted(wanted - set(tensors))
    extra = sorted(set(tensors) - wanted - set(UNUSED))
    if missing or extra:
        raise PretrainedError(
            f"{path}: "
            + (
                f"no tensor {missing[0]}"
                if missing
                else f"tensor {extra[0]} is not in a plain Llama"
            ),
            "check that the file is a Llama model of the layer count its metadata gives",
        )
    embed_rows = int(tensors["token_embd.weight"].shape[-1])  # GGUF lists columns first
    cfg = LlamaConfig(**{**cfg.__dict__, "vocab": embed_rows})
    embed = _dequantised(gguf, path, tensors["token_embd.weight"], (cfg.vocab, cfg.d_model))
    norm = _dequantised(gguf, path, tensors["output_norm.weight"], (cfg.d_model,))
    shapes = cfg.shapes()
    blocks = []
    for i in range(cfg.layers):
        block = {
            r: _dequantised(gguf, path, tensors[f"blk.{i}.{GGUF_BLOCK[r]}.weight"], shapes[r])
            for r in BLOCK
        }
        block["q"] = unpermute(block["q"], cfg.heads)
        block["k"] = unpermute(block["k"], cfg.kv_heads)
        blocks.append(block)
    return LlamaDecoder(cfg, embed, norm, blocks)
