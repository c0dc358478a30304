"""The truncation knee of a head (docs/method.md §9, item (d)); the rule is fixed before any
measurement:

* L_full: the validation loss of the trained model; L_abl: the same with the head
  mean-ablated (its output, before the output projection, replaced by its mean over the
  held-out tokens); the head's gap is L_abl − L_full.
* L(r), r = 0 … d_head: the loss with the head's query-key kernel replaced by its rank-r
  truncation (SVD of W_Qᵀ W_K, re-factorised into the head's own W_Q, W_K; r = 0 is a zero
  kernel, uniform causal attention; L(d_head) = L_full, the kernel itself). The same curve with
  the truncation in the inputs' metric (G^½ W_Qᵀ W_K G^½, G the layer's E[x xᵀ] on the capture
  windows) gives the second knee, ``knee_inputs_metric``, beside the registered one.
* knee = the least r with L(r) − L_full ≤ ``fraction`` · gap (``fraction`` = 0.01).
* A head whose gap is ≤ 0 (ablating it does not raise the loss) has no knee: NaN.

Every loss is on one fixed set of held-out windows, so the curve L(r) is deterministic. Each
loss is kept per window (the mean over the window's tokens; every window has the same length,
so the mean over windows is the mean over tokens): the knee's reliability (split halves of the
windows, a bootstrap over them; :mod:`.reliability`) is computed from these, never by running
the model again.
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F

from entropic_bound.heads.model import TinyGPT, head_weights
from entropic_bound.predict.datascale import metric_factors

#: the share of a head's ablation gap that its truncation may cost (the rule above)
KNEE_FRACTION = 0.01


def truncated_factors(Wq: torch.Tensor, Wk: torch.Tensor, r: int, G: torch.Tensor | None = None):
    """Rank-r factors of W_Qᵀ W_K in the head's own shapes [d_head, d_model], zero-padded to
    d_head rows, so that W_Q'ᵀ W_K' = M_r:

    * ``G`` None (the plain knee): M_r = U_r S_r V_rᵀ, the best rank-r approximation of M;
    * ``G`` the inputs' second moment E[x xᵀ] [d_model, d_model] (the knee in the inputs' metric,
      as the pretrained heads' H3 reads it): M_r = G^{+½} [G^½ M G^½]_r G^{+½} on the directions
      the inputs vary in (``predict.datascale``; a LayerNorm's 1/γ is left out), the rank-r
      kernel closest to M in the logits' own scale."""
    M = Wq.double().T @ Wk.double()
    if G is None:
        U, S, Vh = torch.linalg.svd(M)
        left, right = U, Vh.T
    else:
        left, S, right = metric_factors(Wq, Wk, G)
    root_s = S[:r].sqrt()
    q, k = torch.zeros_like(Wq), torch.zeros_like(Wk)
    q[:r] = (left[:, :r] * root_s).T.to(Wq.dtype)
    k[:r] = (right[:, :r] * root_s).T.to(Wk.dtype)
    return q, k


def knee_of(losses, full: float, ablated: float, fraction: float = KNEE_FRACTION) -> float:
    """The rule: least r with losses[r] − full ≤ fraction · (ablated − full); NaN when the
    gap is ≤ 0. ``losses[r]`` is L(r) for r = 0 … d_head."""
    gap = ablated - full
    if not gap > 0:
        return math.nan
    for r, loss in enumerate(losses):
        if loss - full <= fraction * gap:
            return float(r)
    return math.nan  # unreachable when losses[-1] == full


class KneeProbe:
    """Losses of one model on fixed windows ``data`` [N, n+1] under edits of one layer's heads.

    The residual stream entering each layer is computed once per layer (an edit of layer l
    changes nothing before it), then each edited loss runs blocks l … L−1 only.
    """

    def __init__(self, model: TinyGPT, data: torch.Tensor, batch: int = 64):
        self.model, self.batch = model, batch
        self.inputs, self.targets = data[:, :-1], data[:, 1:]
        self._layer, self._resid = None, None

    @torch.no_grad()
    def _stream(self, layer: int) -> list[torch.Tensor]:
        if self._layer != layer:
            out = []
            for i in range(0, self.inputs.shape[0], self.batch):
                x = self.model.embed(self.inputs[i : i + self.batch])
                for block in self.model.blocks[:layer]:
                    x = block(x)
                out.append(x)
            self._layer, self._resid = layer, out
        return self._resid

    @torch.no_grad()
    def window_losses(self, layer: int) -> np.ndarray:
        """Each window's mean next-token loss [N] (float64) with whatever edits the model
        holds now."""
        out = []
        for i, x in enumerate(self._stream(layer)):
            targets = self.targets[i * self.batch : i * self.batch + x.shape[0]]
            logits = self.model.head_out(x, layer)
            per_token = F.cross_entropy(logits.transpose(1, 2), targets, reduction="none")
            out.append(per_token.double().mean(1).cpu())
        return torch.cat(out).numpy()

    def loss(self, layer: int) -> float:
        """The mean next-token loss with whatever edits the model holds now."""
        return float(self.window_losses(layer).mean())

    @torch.no_grad()
    def head_mean(self, layer: int, head: int) -> torch.Tensor:
        """The head's mean output over every held-out token: [d_head]."""
        attn = self.model.blocks[layer].attn
        total = 0.0
        for x in self._stream(layer):
            attn.capture = {}
            self.model.blocks[layer](x)
            total = total + attn.capture["y"][:, head].mean((0, 1)) * x.shape[0]
        attn.capture = None
        return total / self.inputs.shape[0]

    @torch.no_grad()
    def ablated(self, layer: int, head: int) -> np.ndarray:
        """L_abl per window [N]: the losses with the head mean-ablated."""
        attn = self.model.blocks[layer].attn
        attn.mean_ablate = {head: self.head_mean(layer, head)}
        try:
            return self.window_losses(layer)
        finally:
            attn.mean_ablate = {}

    @torch.no_grad()
    def truncation_curve(self, layer: int, head: int, full: np.ndarray, G=None) -> np.ndarray:
        """L(r) per window, r = 0 … d_head: [d_head + 1, N] (row d_head is ``full`` [N], the
        unedited kernel's); ``G``: truncate in the inputs' metric (:func:`truncated_factors`)."""
        w = head_weights(self.model, layer, head)
        saved_q, saved_k = w["q"].clone(), w["k"].clone()
        d_head = saved_q.shape[0]
        losses = []
        try:
            for r in range(d_head):
                q, k = truncated_factors(saved_q, saved_k, r, G)
                w["q"].copy_(q)
                w["k"].copy_(k)
                losses.append(self.window_losses(layer))
        finally:
            w["q"].copy_(saved_q)
            w["k"].copy_(saved_k)
        return np.stack([*losses, np.asarray(full, dtype=np.float64)])
