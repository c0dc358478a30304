"""The loss knee from data alone (docs/method.md §3, "The loss knee"): the least query-key rank
of a softmax attention head fitted to (X, Y) whose held-out output error is within a share of
the full-rank fit's, the quantity a head's truncation knee measures (§9 (d)), read without the
head's weights.

For r = 0 … d the surrogate is one softmax attention head,

    Ŷ = softmax(Q Kᵀ + mask) (X W_V + 1 b_Vᵀ),   Q = [X, 1] W_Q,   K = X W_K,

with W_Q: [d + 1, r] (the constant column carries a query bias; a key bias adds the same number
to every logit of a row, which softmax ignores), W_K: [d, r], W_V: [d, d_v]. r = 0 is uniform
attention over the visible tokens (the head's mean over them, the fitted value map kept): its
held-out error is the ablation loss L_0, the full rank's is L_d, and

    knee = the least r with L(r) − L_d ≤ fraction · (L_0 − L_d)

(fraction 0.01, §9's rule). Every fit runs on the tokens whitened in the k directions they vary in
(:mod:`.datascale`; r runs to k); the full-rank fit keeps the best of FULL_STARTS seeded starts,
and each rank-r fit starts from its truncation (the kernel's best rank-r part in the data's
scale) and is refined by L-BFGS on the training sequences; the errors are on held-out ones. L(r) is searched by
bisection, assuming it falls with r (a rank-r head can imitate any lower rank), so about
log₂ d + 2 fits are made, each of ``max_iter`` L-BFGS iterations over B·n² logits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import torch

from entropic_bound.predict.datascale import centred_gram, data_scale_basis

#: the share of the ablation gap that a truncation may cost (docs/method.md §9 (d))
LOSS_KNEE_FRACTION = 0.01
#: the share of the sequences held out for the errors (the rest fit)
HOLDOUT = 0.25
#: L-BFGS iterations of each fit
LOSS_KNEE_ITER = 300
#: seeded starts of the full-rank fit (the least training error kept)
FULL_STARTS = 3


@dataclass
class LossKnee:
    """``knee`` (NaN when the head has no gap: uniform attention fits as well), the held-out
    error of every rank fitted (``losses``: {r: L(r)}), L_0, L_d and the fits made."""

    knee: float
    losses: dict[int, float] = field(default_factory=dict)
    ablated: float = math.nan
    full: float = math.nan
    fits: int = 0


class _Head(torch.nn.Module):
    def __init__(self, d: int, dv: int, r: int, causal: bool):
        super().__init__()
        self.causal, self.r = causal, r
        self.wq = torch.nn.Parameter(torch.zeros(d + 1, r, dtype=torch.float64))
        self.wk = torch.nn.Parameter(torch.zeros(d, r, dtype=torch.float64))
        self.wv = torch.nn.Parameter(torch.zeros(d, dv, dtype=torch.float64))
        self.bv = torch.nn.Parameter(torch.zeros(dv, dtype=torch.float64))

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        n = X.shape[-2]
        ones = torch.ones(*X.shape[:-1], 1, dtype=X.dtype)
        logits = (torch.cat([X, ones], -1) @ self.wq) @ (X @ self.wk).transpose(-1, -2)
        if self.causal:
            hide = ~torch.tril(torch.ones(n, n, dtype=torch.bool))
            logits = logits.masked_fill(hide, float("-inf"))
        return torch.softmax(logits, -1) @ (X @ self.wv + self.bv)

    def kernel(self) -> torch.Tensor:
        """[d + 1, d]: W_Q W_Kᵀ (the last row the query bias's)."""
        return self.wq.detach() @ self.wk.detach().T


def _fit(head: _Head, X, Y, max_iter: int) -> None:
    opt = torch.optim.LBFGS(
        head.parameters(),
        lr=1.0,
        max_iter=max_iter,
        history_size=30,
        tolerance_grad=0.0,
        tolerance_change=0.0,
        line_search_fn="strong_wolfe",
    )
    scale = 1.0 / float((Y * Y).sum())

    def closure():
        opt.zero_grad()
        loss = ((head(X) - Y) ** 2).sum() * scale
        loss.backward()
        return loss

    opt.step(closure)


def _error(head: _Head, X, Y) -> float:
    """Held-out mean squared error as a share of the held-out targets' energy."""
    with torch.no_grad():
        return float(((head(X) - Y) ** 2).sum() / (Y * Y).sum())


def loss_knee(
    X,
    Y,
    causal: bool = False,
    fraction: float = LOSS_KNEE_FRACTION,
    holdout: float = HOLDOUT,
    max_iter: int = LOSS_KNEE_ITER,
    seed: int = 0,
) -> LossKnee:
    """The loss knee of X: [B, n, d], Y: [B, n, d_v] (see the module docstring)."""
    X = torch.as_tensor(np.asarray(X), dtype=torch.float64)
    Y = torch.as_tensor(np.asarray(Y), dtype=torch.float64)
    B, n, d = X.shape
    dv = Y.shape[-1]
    held = max(1, int(round(holdout * B)))
    if B - held < 2:
        raise ValueError(f"the loss knee needs at least 3 sequences to fit and hold out, got {B}")
    order = torch.randperm(B, generator=torch.Generator().manual_seed(seed))
    fit_x, fit_y = X[order[held:]], Y[order[held:]]
    test_x, test_y = X[order[:held]], Y[order[:held]]
    # every fit runs on the tokens whitened in the directions they vary in (datascale): the same
    # family of heads (a shift of the tokens is a query bias, a value bias, and nothing on the
    # key side), better conditioned, and the rank-r starts truncate the kernel in the data's scale
    T = data_scale_basis(centred_gram(fit_x.numpy()), (B - held) * n)
    if T is None:
        raise ValueError("the tokens do not vary: there is no kernel to read")
    T, mu = torch.from_numpy(T), fit_x.reshape(-1, d).mean(0)
    fit_x, test_x = (fit_x - mu) @ T, (test_x - mu) @ T
    k = T.shape[1]
    gen = torch.Generator().manual_seed(seed)
    values = torch.linalg.lstsq(fit_x.reshape(-1, k), fit_y.reshape(-1, dv)).solution
    full, best = None, math.inf
    for _ in range(FULL_STARTS):  # the full fit has poor basins (a near-zero kernel is one)
        head = _Head(k, dv, k, causal)
        with torch.no_grad():
            head.wq[:k].copy_(torch.randn(k, k, generator=gen, dtype=torch.float64) / k**0.25)
            head.wk.copy_(torch.eye(k, dtype=torch.float64) / k**0.25)
            head.wv.copy_(values)
        _fit(head, fit_x, fit_y, max_iter)
        loss = _error(head, fit_x, fit_y)
        if loss < best:
            full, best = head, loss
    out = LossKnee(math.nan, fits=FULL_STARTS)
    out.full = out.losses[k] = _error(full, test_x, test_y)
    U, S, Vh = torch.linalg.svd(full.kernel(), full_matrices=False)  # [k + 1, k]

    def at(r: int) -> float:
        if r in out.losses:
            return out.losses[r]
        head = _Head(k, dv, r, causal)
        with torch.no_grad():
            root = S[:r].sqrt()
            head.wq.copy_(U[:, :r] * root)
            head.wk.copy_(Vh[:r].T * root)
            head.wv.copy_(full.wv)
            head.bv.copy_(full.bv)
        if r > 0:
            _fit(head, fit_x, fit_y, max_iter)
        else:  # uniform attention: only the value map is fitted
            _fit_values(head, fit_x, fit_y, max_iter)
        out.fits += 1
        out.losses[r] = _error(head, test_x, test_y)
        return out.losses[r]

    out.ablated = at(0)
    gap = out.ablated - out.full
    if not gap > 0:
        return out
    lo, hi = 0, k  # L(lo) misses the allowance, L(hi) meets it
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if at(mid) - out.full <= fraction * gap:
            hi = mid
        else:
            lo = mid
    out.knee = float(hi)
    return out


def _fit_values(head: _Head, X, Y, max_iter: int) -> None:
    for p in (head.wq, head.wk):
        p.requires_grad_(False)
    _fit(head, X, Y, max_iter)
