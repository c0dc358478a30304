"""What a forward pass hands back for measurement: per captured layer, the heads' shared input X
and every head's output Y before the output projection; per head, its query and key maps.

For layer l on windows [N, n]: ``x`` [N, n, d_model] is what the layer's query, key and value
maps read (an encoder's hidden states entering the layer; in a pre-norm decoder the normalised
residual), ``y`` [N, H, n, d_head] the heads' attention-weighted values. Head h's logits are
``(x W_Q,hᵀ + b_Q,h)(x W_K,hᵀ + b_K,h)ᵀ · scale``, plus what the family adds (MPNet's relative
position bias, a decoder's rotation of queries and keys and its causal mask).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import torch

from entropic_bound.pretrained.errors import PretrainedError


@dataclass(frozen=True)
class HeadWeights:
    """One head's query, key and value maps: ``w_q``, ``w_k``, ``w_v`` [d_head, d_model] (rows
    of the layer's weight, as ``x @ w_q.T + b_q``; a decoder's key and value rows are its
    key/value head's), biases [d_head] or None, and the logits' ``scale``. The value map lets a
    measurement recompute the head's output Y under an edited query-key kernel."""

    w_q: torch.Tensor
    w_k: torch.Tensor
    b_q: torch.Tensor | None
    b_k: torch.Tensor | None
    scale: float
    w_v: torch.Tensor | None = None
    b_v: torch.Tensor | None = None


@dataclass
class LayerCapture:
    """Layer ``layer``'s X [N, n, d_model] and Y [N, H, n, d_head] (module docstring)."""

    layer: int
    x: torch.Tensor
    y: torch.Tensor

    def head_output(self, head: int) -> torch.Tensor:
        """Y of one head, [N, n, d_head]."""
        return self.y[:, head]


@dataclass
class Forward:
    """A forward pass's answer: the final hidden states [N, n, d_model] (None when not asked
    for), the captured layers by index, the attention mask [N, n] (1: a token, 0: padding),
    for a family that adds one the logits' position bias [H, n, n] (the same for every layer),
    and whether a query sees only the keys up to its own position (``causal``)."""

    hidden: torch.Tensor | None
    layers: dict[int, LayerCapture] = field(default_factory=dict)
    mask: torch.Tensor | None = None
    position_bias: torch.Tensor | None = None
    causal: bool = False


def capture_set(layers: Iterable[int] | int | str | None, count: int) -> tuple[int, ...]:
    """The sorted layers to capture, each checked against the model's ``count`` layers
    (None: none; ``"all"``: every layer)."""
    if layers is None:
        return ()
    if isinstance(layers, str):
        if layers != "all":
            raise PretrainedError(f"capture {layers!r}: not a layer list", "give layer numbers")
        return tuple(range(count))
    if isinstance(layers, int):
        layers = (layers,)
    chosen = sorted(set(layers))
    bad = [i for i in chosen if type(i) is not int or not 0 <= i < count]
    if bad:
        raise PretrainedError(
            f"capture layer {bad[0]!r} does not exist", f"the model's layers are 0 … {count - 1}"
        )
    return tuple(chosen)


def gather(parts: dict[int, dict[str, list[torch.Tensor]]]) -> dict[int, LayerCapture]:
    """Batches' captures joined along the windows."""
    return {
        i: LayerCapture(i, torch.cat(p["x"]), torch.cat(p["y"])) for i, p in sorted(parts.items())
    }


def check_windows(ids: torch.Tensor, mask, vocab: int, max_len: int) -> tuple:
    """``ids`` [N, n] (int64) and ``mask`` [N, n] (all ones when None), checked against the
    model's vocabulary and longest window."""
    ids = torch.as_tensor(ids)
    if ids.dim() != 2 or ids.shape[0] == 0 or ids.shape[1] == 0:
        raise PretrainedError(
            f"token ids of shape {list(ids.shape)}: need [windows, tokens], both nonzero"
        )
    if ids.dtype not in (torch.int64, torch.int32, torch.int16, torch.uint8):
        raise PretrainedError(f"token ids of dtype {ids.dtype}: need integers")
    ids = ids.to(torch.int64)
    if ids.shape[1] > max_len:
        raise PretrainedError(
            f"windows of {ids.shape[1]} tokens: the model takes at most {max_len}",
            "cut the text into shorter windows",
        )
    low, high = int(ids.min()), int(ids.max())
    if low < 0 or high >= vocab:
        raise PretrainedError(
            f"token id {low if low < 0 else high} is outside the vocabulary of {vocab}",
            "tokenise with the model's own tokenizer",
        )
    if mask is None:
        mask = torch.ones_like(ids)
    mask = torch.as_tensor(mask)
    if mask.shape != ids.shape:
        raise PretrainedError(
            f"attention mask of shape {list(mask.shape)} for token ids {list(ids.shape)}"
        )
    if not bool(((mask == 0) | (mask == 1)).all()):
        raise PretrainedError("the attention mask holds values other than 0 and 1")
    if not bool(mask.any(1).all()):
        raise PretrainedError("a window has no token unmasked", "drop empty windows")
    return ids, mask.to(torch.int64)
