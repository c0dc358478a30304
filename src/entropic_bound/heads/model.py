"""A small causal transformer (nanoGPT-simple) whose heads can be read and edited one by one.

Pre-LayerNorm blocks, learned positions, no biases in the attention maps, tied input/output
embeddings. Head h of a layer reads the LayerNorm'd residual ``x: [B, n, d_model]`` and writes

    y_h = softmax(mask(x W_Q,hᵀ (x W_K,hᵀ)ᵀ / √d_head)) x W_V,hᵀ      [B, n, d_head]

so its query-key kernel is W_Q,hᵀ W_K,h (d_model × d_model, rank ≤ d_head), the matrix of
docs/method.md §9. Rows h·d_head … (h+1)·d_head of ``qkv`` hold W_Q,h, W_K,h and W_V,h.

Two switches on :class:`CausalSelfAttention`, off in training: ``capture`` (a dict) collects the
head's input x, the pre-softmax logits and the per-head outputs y (before the output
projection); ``mean_ablate`` ({head: [d_head] vector}) replaces a head's output by a constant,
its mean over held-out text (the ablation of the knee rule).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn


@dataclass(frozen=True)
class ModelShape:
    """The model's size: ``layers`` blocks of ``heads`` heads of ``d_head``; ``context`` tokens."""

    layers: int
    heads: int
    d_head: int
    context: int
    vocab: int = 256
    mlp_ratio: int = 4

    @property
    def d_model(self) -> int:
        return self.heads * self.d_head


class CausalSelfAttention(nn.Module):
    def __init__(self, shape: ModelShape):
        super().__init__()
        self.heads, self.d_head = shape.heads, shape.d_head
        self.qkv = nn.Linear(shape.d_model, 3 * shape.d_model, bias=False)
        self.proj = nn.Linear(shape.d_model, shape.d_model, bias=False)
        mask = torch.tril(torch.ones(shape.context, shape.context, dtype=torch.bool))
        self.register_buffer("mask", mask, persistent=False)
        self.capture: dict | None = None
        self.mean_ablate: dict[int, torch.Tensor] = {}

    def split(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """q, k, v: [B, H, n, d_head] each."""
        B, n, _ = x.shape
        q, k, v = self.qkv(x).split(self.heads * self.d_head, dim=-1)
        return tuple(t.view(B, n, self.heads, self.d_head).transpose(1, 2) for t in (q, k, v))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, n, _ = x.shape
        q, k, v = self.split(x)
        logits = (q @ k.transpose(-1, -2)) / math.sqrt(self.d_head)  # [B, H, n, n]
        mask = self.mask[:n, :n]
        att = logits.masked_fill(~mask, float("-inf")).softmax(-1)
        y = att @ v  # [B, H, n, d_head]
        for h, mean in self.mean_ablate.items():
            y[:, h] = mean
        if self.capture is not None:
            self.capture.update(x=x.detach(), logits=logits.detach(), y=y.detach())
        return self.proj(y.transpose(1, 2).reshape(B, n, -1))


class Block(nn.Module):
    def __init__(self, shape: ModelShape):
        super().__init__()
        self.ln1 = nn.LayerNorm(shape.d_model)
        self.attn = CausalSelfAttention(shape)
        self.ln2 = nn.LayerNorm(shape.d_model)
        width = shape.mlp_ratio * shape.d_model
        self.mlp = nn.Sequential(
            nn.Linear(shape.d_model, width), nn.GELU(), nn.Linear(width, shape.d_model)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class TinyGPT(nn.Module):
    """Byte-level causal language model: tokens [B, n] -> next-token logits [B, n, vocab]."""

    def __init__(self, shape: ModelShape):
        super().__init__()
        self.shape = shape
        self.tok = nn.Embedding(shape.vocab, shape.d_model)
        self.pos = nn.Embedding(shape.context, shape.d_model)
        self.blocks = nn.ModuleList(Block(shape) for _ in range(shape.layers))
        self.ln_f = nn.LayerNorm(shape.d_model)
        self.apply(self._init)

    @staticmethod
    def _init(m: nn.Module) -> None:
        if isinstance(m, nn.Linear | nn.Embedding):
            nn.init.normal_(m.weight, std=0.02)
        if isinstance(m, nn.Linear) and m.bias is not None:
            nn.init.zeros_(m.bias)

    def embed(self, idx: torch.Tensor) -> torch.Tensor:
        """The residual stream entering block 0: [B, n, d_model]."""
        return self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))

    def head_out(self, x: torch.Tensor, start: int = 0) -> torch.Tensor:
        """Logits [B, n, vocab] from the residual ``x`` entering block ``start``."""
        for block in self.blocks[start:]:
            x = block(x)
        return self.ln_f(x) @ self.tok.weight.T  # tied embeddings

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        return self.head_out(self.embed(idx))


def next_token_loss(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy (nats per byte) of logits [B, n, V] against targets [B, n]."""
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def head_weights(model: TinyGPT, layer: int, head: int) -> dict[str, torch.Tensor]:
    """Views W_Q,h, W_K,h, W_V,h: [d_head, d_model] each, of ``layer``'s head ``head``."""
    attn = model.blocks[layer].attn
    d, dh = model.shape.d_model, model.shape.d_head
    w = attn.qkv.weight
    rows = slice(head * dh, (head + 1) * dh)
    return {"q": w[0:d][rows], "k": w[d : 2 * d][rows], "v": w[2 * d : 3 * d][rows]}


def qk_kernel(model: TinyGPT, layer: int, head: int) -> torch.Tensor:
    """The head's learned W_Qᵀ W_K: [d_model, d_model] (float64), rank ≤ d_head."""
    w = head_weights(model, layer, head)
    return w["q"].detach().double().T @ w["k"].detach().double()
