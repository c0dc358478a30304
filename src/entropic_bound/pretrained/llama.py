"""A Llama-style decoder's forward pass in plain torch: pre-norm blocks (RMSNorm), rotary
positions, grouped key/value heads, a gated SiLU MLP, a causal mask.

Layer l maps the residual r [B, n, d] to

    x = RMSNorm₁(r)                         the heads' shared input (what :mod:`.capture` keeps)
    r' = r + O(attn(x)),  attn: H query heads; head h reads key/value head h // (H / H_kv)
    r'' = r' + W_down(silu(W_gate z) · W_up z),  z = RMSNorm₂(r')

and head h's logit of query i on key j is ⟨R_i (W_Q,h x_i), R_j (W_K,h x_j)⟩ / √d_head for j ≤ i,
R_t the rotation by position t of each pair of coordinates (k, k + d_head/2) at frequency
base^(−2k/d_head): the query and key rows are in that "rotate half" order, as the reference
implementation stores them (:mod:`.gguf_file` undoes the GGUF converter's interleaving).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from entropic_bound.pretrained.capture import (
    Forward,
    HeadWeights,
    capture_set,
    check_windows,
    gather,
)
from entropic_bound.pretrained.errors import PretrainedError

#: the tensors of a block, by role (their shapes: LlamaConfig.shapes)
BLOCK = ("attn_norm", "q", "k", "v", "o", "ffn_norm", "gate", "up", "down")


@dataclass(frozen=True)
class LlamaConfig:
    """A Llama-style decoder's shape and settings."""

    layers: int
    heads: int
    kv_heads: int
    d_model: int
    d_ff: int
    vocab: int
    context: int
    eps: float
    rope_base: float

    @property
    def d_head(self) -> int:
        return self.d_model // self.heads

    @property
    def group(self) -> int:
        """Query heads per key/value head."""
        return self.heads // self.kv_heads

    def shapes(self) -> dict[str, tuple[int, ...]]:
        """Each block tensor's shape (weights as [out, in], the way ``F.linear`` takes them)."""
        d, kv = self.d_model, self.kv_heads * self.d_head
        return {
            "attn_norm": (d,),
            "q": (d, d),
            "k": (kv, d),
            "v": (kv, d),
            "o": (d, d),
            "ffn_norm": (d,),
            "gate": (self.d_ff, d),
            "up": (self.d_ff, d),
            "down": (d, self.d_ff),
        }


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    return weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))


def rotate_half(t: torch.Tensor) -> torch.Tensor:
    half = t.shape[-1] // 2
    return torch.cat((-t[..., half:], t[..., :half]), dim=-1)


class LlamaDecoder:
    """A decoder from checked tensors: ``embed`` [vocab, d], ``norm`` [d] and one dict of
    :data:`BLOCK` tensors per layer."""

    causal = True

    def __init__(self, cfg: LlamaConfig, embed, norm, blocks: list[dict[str, torch.Tensor]]):
        self.cfg = cfg
        self.scale = 1.0 / math.sqrt(cfg.d_head)
        self.embed, self.norm, self.blocks = embed, norm, blocks

    @property
    def max_len(self) -> int:
        return self.cfg.context

    def rope(self, n: int) -> tuple[torch.Tensor, torch.Tensor]:
        """cos and sin [n, d_head] of positions 0 … n−1 (the frequencies computed in float32
        as the reference computes them, so that the angles agree to the last bit)."""
        dh = self.cfg.d_head
        inv_freq = 1.0 / (self.cfg.rope_base ** (torch.arange(0, dh, 2, dtype=torch.float) / dh))
        freqs = torch.arange(n).float()[:, None] * inv_freq
        angles = torch.cat((freqs, freqs), dim=-1)
        return angles.cos(), angles.sin()

    def head_weights(self, layer: int, head: int) -> HeadWeights:
        """Head ``head`` of layer ``layer``: its query rows and its key/value head's key and
        value rows (before the rotation by position, which :meth:`rope` gives)."""
        c = self.cfg
        if not (0 <= layer < c.layers and 0 <= head < c.heads):
            raise PretrainedError(
                f"head {layer}.{head} does not exist",
                f"layers 0 … {c.layers - 1}, heads 0 … {c.heads - 1}",
            )
        q_rows = slice(head * c.d_head, (head + 1) * c.d_head)
        kv = head // c.group
        k_rows = slice(kv * c.d_head, (kv + 1) * c.d_head)
        w = self.blocks[layer]
        return HeadWeights(
            w["q"][q_rows], w["k"][k_rows], None, None, self.scale, w["v"][k_rows], None
        )

    def _layer(self, w, r, mask_add, cos, sin):
        """One block on the residual r: (its output, the heads' input x, their outputs Y)."""
        c = self.cfg
        B, n, d = r.shape
        x = rms_norm(r, w["attn_norm"], c.eps)
        q = F.linear(x, w["q"]).view(B, n, c.heads, c.d_head).transpose(1, 2)
        k = F.linear(x, w["k"]).view(B, n, c.kv_heads, c.d_head).transpose(1, 2)
        v = F.linear(x, w["v"]).view(B, n, c.kv_heads, c.d_head).transpose(1, 2)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        k, v = k.repeat_interleave(c.group, dim=1), v.repeat_interleave(c.group, dim=1)
        logits = (q @ k.transpose(-1, -2)) * self.scale
        y = (logits + mask_add).softmax(-1) @ v  # [B, H, n, d_head]
        r = r + F.linear(y.transpose(1, 2).reshape(B, n, d), w["o"])
        z = rms_norm(r, w["ffn_norm"], c.eps)
        r = r + F.linear(F.silu(F.linear(z, w["gate"])) * F.linear(z, w["up"]), w["down"])
        return r, x, y

    @torch.no_grad()
    def forward(self, ids, mask=None, capture=None, batch: int = 8, hidden: bool = True):
        """The decoder on windows ``ids`` [N, n] (``mask``: 1 for a token, 0 for padding after
        the tokens), as :meth:`.bert.Encoder.forward`; the hidden states are after the final
        RMSNorm."""
        c = self.cfg
        ids, mask = check_windows(ids, mask, c.vocab, self.max_len)
        if bool((mask[:, 1:] > mask[:, :-1]).any()):
            raise PretrainedError(
                "a window has padding before a token", "pad after the tokens (right padding)"
            )
        layers = capture_set(capture, c.layers)
        last = c.layers if hidden else (layers[-1] + 1 if layers else 0)
        n = ids.shape[1]
        cos, sin = self.rope(n)
        causal = torch.ones(n, n, dtype=torch.bool).tril()
        parts = {i: {"x": [], "y": []} for i in layers}
        finals = []
        step = max(1, int(batch))
        for s in range(0, ids.shape[0], step):
            b_mask = mask[s : s + step]
            allowed = causal[None] & (b_mask[:, None, :] == 1)
            # a masked key gets the most negative float: a weight of exactly 0 after softmax
            mask_add = torch.zeros(allowed.shape).masked_fill(
                ~allowed, torch.finfo(torch.float32).min
            )[:, None]
            r = self.embed[ids[s : s + step]]
            for i in range(last):
                r, x, y = self._layer(self.blocks[i], r, mask_add, cos, sin)
                if i in parts:
                    parts[i]["x"].append(x)
                    parts[i]["y"].append(y)
            if hidden:
                finals.append(rms_norm(r, self.norm, c.eps))
        return Forward(
            hidden=torch.cat(finals) if hidden else None,
            layers=gather(parts),
            mask=mask,
            causal=True,
        )
