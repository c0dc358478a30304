"""A model folder's ``config.json``, read and checked field by field into :class:`EncoderConfig`.

Only the fields that change the forward pass are read. The size fields are required; the others
take the default of the model family's reference implementation when absent (so that a
checkpoint its authors load is loaded here too) and are refused when present with a value the
forward here does not implement, rather than silently computing another model.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from entropic_bound.pretrained.errors import PretrainedError

#: the encoder families implemented: model_type -> the prefix of its architectures' names (a
#: task head on top of the encoder changes nothing here; another body under the same
#: model_type would)
ENCODERS = {"bert": "Bert", "mpnet": "MPNet"}
#: hidden_act values implemented (each the reference's meaning: "gelu" is the exact erf form)
ACTIVATIONS = ("gelu", "relu", "gelu_new", "gelu_pytorch_tanh")
#: the defaults of the reference configuration classes, per family
DEFAULTS = {
    "bert": {
        "layer_norm_eps": 1e-12,
        "hidden_act": "gelu",
        "type_vocab_size": 2,
        "position_embedding_type": "absolute",
    },
    "mpnet": {"layer_norm_eps": 1e-12, "hidden_act": "gelu", "relative_attention_num_buckets": 32},
}
#: MPNet's relative position buckets: its reference implementation computes 32 whatever
#: config.json says, so that a table of another size would be read differently from how it was
#: trained
MPNET_BUCKETS = 32
SIZES = (
    "hidden_size",
    "num_attention_heads",
    "num_hidden_layers",
    "intermediate_size",
    "vocab_size",
    "max_position_embeddings",
)


@dataclass(frozen=True)
class EncoderConfig:
    """A BERT-family encoder's shape and settings (the names of config.json in comments)."""

    model_type: str
    d_model: int  # hidden_size
    heads: int  # num_attention_heads
    layers: int  # num_hidden_layers
    d_ff: int  # intermediate_size
    vocab: int  # vocab_size
    max_positions: int  # max_position_embeddings
    eps: float  # layer_norm_eps
    act: str  # hidden_act
    type_vocab: int = 0  # type_vocab_size (BERT's segment embeddings; 0: none)
    buckets: int = 0  # relative_attention_num_buckets (MPNet's position bias; 0: none)

    @property
    def d_head(self) -> int:
        return self.d_model // self.heads


def _bad(path: Path, field: str, why: str) -> PretrainedError:
    return PretrainedError(
        f"{path}: {field} {why}", "fix config.json or use the one published with the weights"
    )


def _positive_int(path: Path, raw: dict, field: str) -> int:
    if field not in raw:
        raise _bad(path, field, "is missing")
    value = raw[field]
    if type(value) is not int or value < 1:
        raise _bad(path, field, f"must be a positive integer, not {value!r}")
    return value


def read_json(path: Path) -> dict:
    """A JSON object from ``path``, or one line saying why not."""
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise PretrainedError(
            f"{path} is not valid JSON ({' '.join(str(exc).split())})",
            "download or unpack the model again",
        ) from None
    if not isinstance(raw, dict):
        raise PretrainedError(f"{path} is not a JSON object", "download or unpack it again")
    return raw


def model_type_of(path: Path, raw: dict) -> str:
    """config.json's ``model_type``, which must be one implemented here."""
    kind = raw.get("model_type")
    if kind is None:
        raise _bad(path, "model_type", "is missing")
    if kind not in ENCODERS:
        raise PretrainedError(
            f"{path}: model_type {kind!r} is not supported",
            f"supported: {', '.join(sorted(ENCODERS))} (and Llama-style .gguf files)",
        )
    archs = raw.get("architectures") or []
    if not isinstance(archs, list) or not all(isinstance(a, str) for a in archs):
        raise _bad(path, "architectures", f"must be a list of names, not {archs!r}")
    unknown = [a for a in archs if not a.startswith(ENCODERS[kind])]
    if unknown:
        raise PretrainedError(
            f"{path}: architecture {unknown[0]!r} is not a {kind} encoder",
            "check that config.json belongs to the weights",
        )
    for flag in ("is_decoder", "add_cross_attention"):  # a causal mask, a second input
        if raw.get(flag):
            raise _bad(path, flag, "is true: only the bidirectional encoder is implemented")
    return kind


def encoder_config(path) -> EncoderConfig:
    """The checked :class:`EncoderConfig` of the config.json at ``path``."""
    path = Path(path)
    raw = read_json(path)
    kind = model_type_of(path, raw)
    sizes = {f: _positive_int(path, raw, f) for f in SIZES}
    raw = DEFAULTS[kind] | raw
    if sizes["hidden_size"] % sizes["num_attention_heads"]:
        raise _bad(
            path,
            "hidden_size",
            f"{sizes['hidden_size']} is not a multiple of num_attention_heads "
            f"{sizes['num_attention_heads']}",
        )
    eps = raw["layer_norm_eps"]
    if type(eps) not in (int, float) or not 0 < eps < 1:
        raise _bad(path, "layer_norm_eps", f"must be a number in (0, 1), not {eps!r}")
    if raw["hidden_act"] not in ACTIVATIONS:
        raise _bad(
            path,
            "hidden_act",
            f"{raw['hidden_act']!r} is not implemented (implemented: {', '.join(ACTIVATIONS)})",
        )
    extra = {}
    if kind == "bert":
        if raw["position_embedding_type"] != "absolute":
            raise _bad(
                path,
                "position_embedding_type",
                f"{raw['position_embedding_type']!r} is not implemented (only 'absolute')",
            )
        extra["type_vocab"] = _positive_int(path, raw, "type_vocab_size")
    else:
        extra["buckets"] = _positive_int(path, raw, "relative_attention_num_buckets")
        if extra["buckets"] != MPNET_BUCKETS:  # the reference buckets by 32 whatever this says
            raise _bad(
                path,
                "relative_attention_num_buckets",
                f"{extra['buckets']} is not implemented (only {MPNET_BUCKETS})",
            )
    return EncoderConfig(
        model_type=kind,
        d_model=sizes["hidden_size"],
        heads=sizes["num_attention_heads"],
        layers=sizes["num_hidden_layers"],
        d_ff=sizes["intermediate_size"],
        vocab=sizes["vocab_size"],
        max_positions=sizes["max_position_embeddings"],
        eps=float(eps),
        act=raw["hidden_act"],
        **extra,
    )
