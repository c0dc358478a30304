"""A BERT-family encoder's forward pass in plain torch, from the tensors of a safetensors file.

Post-LayerNorm blocks, in evaluation (no dropout): layer l maps its input x [B, n, d] to

    a = LN₁(x + O(attn(x)))        attn: H heads, softmax((x W_Q,h + b)(x W_K,h + b)ᵀ/√d_head
    x' = LN₂(a + W₂ act(W₁ a))              + mask) (x W_V,h + b)

so every head of layer l reads x itself, which is what :mod:`.capture` returns as X. BERT's
embeddings add a learned position and the first segment's type vector; MPNet (:mod:`.mpnet`)
overrides the embeddings and adds a relative position bias to the logits. The weights' names
are the reference implementation's, so one model reads the checkpoints it writes.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from entropic_bound.pretrained.capture import (
    Forward,
    HeadWeights,
    capture_set,
    check_windows,
    gather,
)
from entropic_bound.pretrained.config import EncoderConfig
from entropic_bound.pretrained.errors import PretrainedError
from entropic_bound.pretrained.tensorfile import TensorFile

#: a layer's maps -> their names under ``encoder.layer.<l>.`` in BERT's checkpoints
BERT_LAYER = {
    "q": "attention.self.query",
    "k": "attention.self.key",
    "v": "attention.self.value",
    "o": "attention.output.dense",
    "ln1": "attention.output.LayerNorm",
    "ff1": "intermediate.dense",
    "ff2": "output.dense",
    "ln2": "output.LayerNorm",
}


def activation(name: str):
    """config.json's ``hidden_act`` as a function (the reference's meaning of each name)."""
    if name == "gelu":
        return F.gelu
    if name == "relu":
        return F.relu
    return lambda t: F.gelu(t, approximate="tanh")  # gelu_new, gelu_pytorch_tanh


class Encoder:
    """A BERT encoder (``model_type`` "bert"); :meth:`forward` runs it on windows of token ids."""

    LAYER = BERT_LAYER
    #: where the encoder's tensors may sit in a checkpoint: bare, or under a task model's body
    PREFIXES = ("", "bert.")

    def __init__(self, cfg: EncoderConfig, file: TensorFile):
        self.cfg = cfg
        self.scale = 1.0 / math.sqrt(cfg.d_head)
        self.act = activation(cfg.act)
        self.prefix = self._prefix(file)
        self.embeddings = self._read_embeddings(file)
        self.blocks = [self._read_layer(file, i) for i in range(cfg.layers)]

    # --- weights ---

    def _prefix(self, file: TensorFile) -> str:
        for p in self.PREFIXES:
            if f"{p}embeddings.word_embeddings.weight" in file:
                return p
        raise PretrainedError(
            f"{file.path.name} has no embeddings.word_embeddings.weight "
            f"(a {self.cfg.model_type} checkpoint has one)",
            "check that the weights and config.json belong to the same model",
        )

    def _get(self, file: TensorFile, name: str, shape: tuple[int, ...]) -> torch.Tensor:
        return file.weight(self.prefix + name, shape, f"config.json ({self.cfg.model_type})")

    def _linear(self, file, name, n_out, n_in) -> tuple[torch.Tensor, torch.Tensor]:
        return self._get(file, f"{name}.weight", (n_out, n_in)), self._get(
            file, f"{name}.bias", (n_out,)
        )

    def _norm(self, file, name) -> tuple[torch.Tensor, torch.Tensor]:
        d = self.cfg.d_model
        return self._get(file, f"{name}.weight", (d,)), self._get(file, f"{name}.bias", (d,))

    def _read_embeddings(self, file: TensorFile) -> dict[str, torch.Tensor]:
        c = self.cfg
        return {
            "word": self._get(file, "embeddings.word_embeddings.weight", (c.vocab, c.d_model)),
            "position": self._get(
                file, "embeddings.position_embeddings.weight", (c.max_positions, c.d_model)
            ),
            "type": self._get(
                file, "embeddings.token_type_embeddings.weight", (c.type_vocab, c.d_model)
            ),
            "ln": self._norm(file, "embeddings.LayerNorm"),
        }

    def _read_layer(self, file: TensorFile, i: int) -> dict[str, tuple]:
        c, at = self.cfg, f"encoder.layer.{i}."
        d, f = c.d_model, c.d_ff
        names = self.LAYER
        return {
            "q": self._linear(file, at + names["q"], d, d),
            "k": self._linear(file, at + names["k"], d, d),
            "v": self._linear(file, at + names["v"], d, d),
            "o": self._linear(file, at + names["o"], d, d),
            "ln1": self._norm(file, at + names["ln1"]),
            "ff1": self._linear(file, at + names["ff1"], f, d),
            "ff2": self._linear(file, at + names["ff2"], d, f),
            "ln2": self._norm(file, at + names["ln2"]),
        }

    def head_weights(self, layer: int, head: int) -> HeadWeights:
        """Head ``head`` of layer ``layer``: its rows of the query, key and value maps."""
        if not (0 <= layer < self.cfg.layers and 0 <= head < self.cfg.heads):
            raise PretrainedError(
                f"head {layer}.{head} does not exist",
                f"layers 0 … {self.cfg.layers - 1}, heads 0 … {self.cfg.heads - 1}",
            )
        rows = slice(head * self.cfg.d_head, (head + 1) * self.cfg.d_head)
        (wq, bq), (wk, bk), (wv, bv) = (self.blocks[layer][m] for m in "qkv")
        return HeadWeights(wq[rows], wk[rows], bq[rows], bk[rows], self.scale, wv[rows], bv[rows])

    # --- the forward pass ---

    @property
    def max_len(self) -> int:
        """The longest window: one learned position per token."""
        return self.cfg.max_positions

    def embed(self, ids: torch.Tensor) -> torch.Tensor:
        """The first layer's input [B, n, d] for ``ids`` [B, n] (every token of segment 0)."""
        e = self.embeddings
        n = ids.shape[1]
        x = e["word"][ids] + e["type"][0] + e["position"][:n]
        return F.layer_norm(x, (self.cfg.d_model,), *e["ln"], eps=self.cfg.eps)

    def position_bias(self, n: int) -> torch.Tensor | None:
        """What the family adds to every layer's logits [H, n, n]; BERT adds nothing."""
        return None

    def _layer(self, w, x, mask_add, bias) -> tuple[torch.Tensor, torch.Tensor]:
        """One block on x [B, n, d]: (its output, the heads' outputs Y [B, H, n, d_head])."""
        c = self.cfg
        B, n, d = x.shape
        q, k, v = (F.linear(x, *w[m]).view(B, n, c.heads, c.d_head).transpose(1, 2) for m in "qkv")
        logits = (q @ k.transpose(-1, -2)) * self.scale
        if bias is not None:
            logits = logits + bias
        y = (logits + mask_add).softmax(-1) @ v  # [B, H, n, d_head]
        a = F.linear(y.transpose(1, 2).reshape(B, n, d), *w["o"])
        a = F.layer_norm(a + x, (d,), *w["ln1"], eps=c.eps)
        out = F.linear(self.act(F.linear(a, *w["ff1"])), *w["ff2"])
        return F.layer_norm(out + a, (d,), *w["ln2"], eps=c.eps), y

    @torch.no_grad()
    def forward(self, ids, mask=None, capture=None, batch: int = 32, hidden: bool = True):
        """The encoder on windows ``ids`` [N, n] with ``mask`` [N, n] (1: a token, 0: padding;
        None: all tokens), ``batch`` windows at a time. ``capture``: the layers whose X and Y
        to keep (:func:`.capture.capture_set`); ``hidden=False`` skips the final hidden states
        and every layer after the last captured one. Returns a :class:`.capture.Forward`."""
        ids, mask = check_windows(ids, mask, self.cfg.vocab, self.max_len)
        layers = capture_set(capture, self.cfg.layers)
        last = self.cfg.layers if hidden else (layers[-1] + 1 if layers else 0)
        bias = self.position_bias(ids.shape[1])
        parts = {i: {"x": [], "y": []} for i in layers}
        finals = []
        step = max(1, int(batch))
        for s in range(0, ids.shape[0], step):
            b_ids, b_mask = ids[s : s + step], mask[s : s + step]
            # padded keys get the most negative float: a weight of exactly 0 after softmax
            mask_add = torch.zeros(b_mask.shape).masked_fill(
                b_mask == 0, torch.finfo(torch.float32).min
            )[:, None, None, :]
            x = self.embed(b_ids)
            for i in range(last):
                x_in = x
                x, y = self._layer(self.blocks[i], x_in, mask_add, bias)
                if i in parts:
                    parts[i]["x"].append(x_in)
                    parts[i]["y"].append(y)
            if hidden:
                finals.append(x)
        return Forward(
            hidden=torch.cat(finals) if hidden else None,
            layers=gather(parts),
            mask=mask,
            position_bias=bias,
        )
