"""The functional knee of a pretrained head (docs/method.md §9e): the least query-key rank that
keeps the head's own output within a tolerance of what it is, read on captured inputs.

A head's logits on windows X [K, n, d] are ``scale · Q̂ K̂ᵀ`` plus what its family adds (MPNet's
relative position bias; a causal mask), with the query-key part written as ``dh`` ordered
columns, ``Q̂ = [q̂_1 … q̂_dh]`` and ``K̂`` alike, so that keeping the first r columns is the rank-r
edit the registration names:

* a bilinear head (BERT, MPNet): the augmented kernel M = [W_Q b_q]ᵀ [W_K b_k] ((d+1) × (d+1),
  rank ≤ dh) on x̄ = [x; 1]. ``plain``: the best rank-r part of M (its SVD); ``inputs_metric``:
  G^{+½} [G^½ M G^½]_r G^{+½}, G = E[x̄ x̄ᵀ] over the windows' tokens, on the directions the
  tokens vary in (``predict.datascale``: a LayerNorm's 1/γ, where G is null, is left out). Both
  come from one QR-and-SVD of the dh × dh core, so M_r = F_q,r F_k,rᵀ and Q̂ = X̄ F_q, K̂ = X̄ F_k;
* a rotary head (Llama): the logit is a sum over dh/2 frequency planes p = (k, k + dh/2) of the
  rotated query and key, so the columns are the planes' coordinate pairs in the order of their
  score (``plain``: ‖W_Q^p‖_F ‖W_K^p‖_F; ``inputs_metric``: ‖W_Q^p G^½‖_F ‖W_K^p G^½‖_F with
  G = E[x xᵀ]) and r runs over 0, 2, …, dh: rank r keeps r/2 of the query's planes.

r = 0 is the zero kernel: uniform attention over the keys a query sees, the family's position
bias kept. ``e(r) = ‖Y_r − Y‖² / ‖Y_0 − Y‖²`` against the captured Y, kept per window so that
the halves of the windows give the knee's reliability without recomputing anything.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from entropic_bound.predict.datascale import NULL_RCOND, metric_factors, second_moment

#: the truncations the registration names, in its order
METRICS = ("plain", "inputs_metric")
#: windows per block of the curve's arithmetic (memory: block · n² doubles per buffer)
BLOCK_WINDOWS = 16


@dataclass
class Head:
    """One captured head: X [K, n, d], Y [K, n, dh] (captured), its maps ``w_q``, ``w_k``,
    ``w_v`` [dh, d] and biases (or None), ``scale``; ``bias`` [n, n] added to its logits (or
    None); ``causal``; ``rope``: (cos, sin) [n, dh] for a rotary head (else None)."""

    X: torch.Tensor
    Y: torch.Tensor
    w_q: torch.Tensor
    w_k: torch.Tensor
    w_v: torch.Tensor
    b_q: torch.Tensor | None
    b_k: torch.Tensor | None
    b_v: torch.Tensor | None
    scale: float
    bias: torch.Tensor | None = None
    causal: bool = False
    rope: tuple[torch.Tensor, torch.Tensor] | None = None

    @property
    def d_head(self) -> int:
        return self.w_q.shape[0]

    @property
    def step(self) -> int:
        """The rank grid's step: 2 for a rotary head (whole planes), else 1."""
        return 2 if self.rope is not None else 1


def augment(X: torch.Tensor) -> torch.Tensor:
    """[..., d] -> [..., d + 1]: the tokens with a constant 1 appended (x̄ = [x; 1])."""
    return torch.cat((X, torch.ones_like(X[..., :1])), dim=-1)


def _maps(w: torch.Tensor, b: torch.Tensor | None) -> torch.Tensor:
    """[W b] as [dh, d + 1] (b = 0 when the family has none), float64."""
    b = torch.zeros(w.shape[0], dtype=w.dtype) if b is None else b
    return torch.cat((w, b[:, None]), dim=1).double()


def kernel_factors(head: Head, metric: str, rcond: float = NULL_RCOND):
    """(F_q, F_k) [d + 1, dh]: the bilinear head's kernel M = F_q F_kᵀ with the columns in the
    order of the truncation ``metric`` (module docstring), so that M_r = F_q[:, :r] F_k[:, :r]ᵀ."""
    Aq, Ak = _maps(head.w_q, head.b_q), _maps(head.w_k, head.b_k)
    if metric == "plain":
        G = None
    elif metric == "inputs_metric":
        G = second_moment(augment(head.X))
    else:
        raise ValueError(f"unknown truncation {metric!r}: one of {', '.join(METRICS)}")
    left, s, right = metric_factors(Aq, Ak, G, rcond)
    return left * s, right


def plane_order(head: Head, metric: str) -> torch.Tensor:
    """A rotary head's planes, best first by the truncation ``metric``'s score (ties by index)."""
    half = head.d_head // 2
    wq, wk = head.w_q.double(), head.w_k.double()
    if metric == "inputs_metric":
        evals, evecs = torch.linalg.eigh(second_moment(head.X))
        root = evecs * evals.clamp(min=0).sqrt()  # G^½ up to an orthogonal factor: norms kept
        wq, wk = wq @ root, wk @ root
    elif metric != "plain":
        raise ValueError(f"unknown truncation {metric!r}: one of {', '.join(METRICS)}")

    def plane_norms(w):
        return (w[:half].pow(2).sum(1) + w[half:].pow(2).sum(1)).sqrt()

    score = plane_norms(wq) * plane_norms(wk)
    return torch.tensor(sorted(range(half), key=lambda p: (-float(score[p]), p)))


def rotate(t: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """The rotation by position of queries or keys t [..., n, dh] (the "rotate half" pairing)."""
    half = t.shape[-1] // 2
    return t * cos + torch.cat((-t[..., half:], t[..., :half]), dim=-1) * sin


def columns(head: Head, metric: str) -> tuple[torch.Tensor, torch.Tensor]:
    """(Q̂, K̂) [K, n, dh] float64, the query-key part in the truncation's column order."""
    X = head.X.double()
    if head.rope is None:
        Fq, Fk = kernel_factors(head, metric)
        Xa = augment(X)
        return Xa @ Fq, Xa @ Fk
    cos, sin = (t.double() for t in head.rope)
    q = rotate(X @ head.w_q.double().T, cos, sin)
    k = rotate(X @ head.w_k.double().T, cos, sin)
    planes = plane_order(head, metric)
    half = head.d_head // 2
    cols = torch.stack((planes, planes + half), dim=1).reshape(-1)
    return q[..., cols], k[..., cols]


def values(head: Head) -> torch.Tensor:
    """The head's values [K, n, dh], float64."""
    v = head.X.double() @ head.w_v.double().T
    return v if head.b_v is None else v + head.b_v.double()


def visible(n: int, causal: bool) -> torch.Tensor:
    """[n, n] True where query i sees key j."""
    full = torch.ones(n, n, dtype=torch.bool)
    return full.tril() if causal else full


def ranks_of(head: Head) -> list[int]:
    """The ranks a curve reads: 0, step, …, dh."""
    return list(range(0, head.d_head + 1, head.step))


def error_curve(head: Head, metric: str) -> tuple[np.ndarray, np.ndarray]:
    """(ranks [R], per-window squared errors [R, K]): ‖Y_r − Y‖² of each window at each rank
    of :func:`ranks_of`, Y_r the head's output with its kernel cut to rank r by ``metric``."""
    Qc, Kc = columns(head, metric)
    V, Y = values(head), head.Y.double()
    K, n, _ = Y.shape
    mask = visible(n, head.causal)
    ranks = ranks_of(head)
    out = np.zeros((len(ranks), K))
    for s in range(0, K, BLOCK_WINDOWS):
        blk = slice(s, s + BLOCK_WINDOWS)
        logits = torch.zeros(Y[blk].shape[0], n, n, dtype=torch.float64)
        if head.bias is not None:
            logits += head.bias.double()
        done = 0
        for i, r in enumerate(ranks):
            if r > done:
                logits += head.scale * (Qc[blk, :, done:r] @ Kc[blk, :, done:r].transpose(1, 2))
                done = r
            weights = logits.masked_fill(~mask, -math.inf).softmax(-1)
            out[i, s : s + logits.shape[0]] = ((weights @ V[blk] - Y[blk]) ** 2).sum((1, 2)).numpy()
    return np.asarray(ranks), out


def relative_error(errors: np.ndarray, windows=None) -> np.ndarray:
    """e(r) over ``windows`` (None: all) from :func:`error_curve`'s errors: each rank's summed
    error over the summed error of rank 0 (NaN where rank 0 changes nothing)."""
    e = errors if windows is None else errors[:, windows]
    total = e.sum(1)
    return total / total[0] if total[0] > 0 else np.full(len(total), np.nan)


def knee_of(ranks, e, tolerance: float) -> float:
    """The least rank whose e(r) ≤ ``tolerance``; NaN when e is undefined."""
    for r, v in zip(ranks, e, strict=True):
        if v <= tolerance:
            return float(r)
    return math.nan
