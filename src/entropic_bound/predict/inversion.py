"""The inversion predictor P_invert (docs/method.md §3): softmax, value known, n ≤ d.

Works in float64 on ``X, Y: [G, B, n, d]`` or ``[B, n, d]``, like every predictor (predict/base.py).
"""

from __future__ import annotations

import numpy as np
import torch

from entropic_bound.predict.base import (
    DEFAULT_CLIP,
    _as_groups,
    _desc_svdvals,
    _out,
    centering,
)


def inversion_normal_matrix(X: torch.Tensor) -> torch.Tensor:
    """Σ_b XᵀX ⊗ XᵀJX: the normal matrix of the P_invert least squares, [G, d², d²]."""
    n, d = X.shape[-2:]
    JX = centering(n, X.dtype) @ X
    XtX = X.transpose(-1, -2) @ X
    XtJX = X.transpose(-1, -2) @ JX
    return torch.einsum("gbij,gbkl->gikjl", XtX, XtJX).reshape(X.shape[0], d * d, d * d)


def token_pinv_exact(X: torch.Tensor) -> torch.Tensor:
    """X⁺ = Xᵀ(XXᵀ)⁻¹: [..., d, n], exact (X X⁺ = I) for X: [..., n, d] with n ≤ d."""
    return X.transpose(-1, -2) @ torch.linalg.inv(X @ X.transpose(-1, -2))


def inversion_kernel(
    X: torch.Tensor,
    Y: torch.Tensor,
    V: torch.Tensor | None,
    normal_chol: torch.Tensor,
    clip: float = DEFAULT_CLIP,
    log: bool = True,
    Xp: torch.Tensor | None = None,
) -> torch.Tensor:
    """Â: [G, d, d], least squares over the sequences of vec L̂_b = (X_b ⊗ J X_b) vec A
    (row-major), L̂_b = log(clip(Y_b V⁻¹ X_b⁺)) J.

    ``log=False`` is P_invert's linear twin (L̂_b = Y_b V⁻¹ X_b⁺ J, no clip, no log): exact on
    linear attention M = c·X A Xᵀ, so the gap between the two is the log's doing (and Â is then
    linear in Y). ``Xp``: the per-sequence X⁺ (:func:`token_pinv_exact`) when the caller
    reuses it across calls.
    """
    Xp = token_pinv_exact(X) if Xp is None else Xp
    Yv = Y if V is None else Y @ torch.linalg.inv(V)
    return operator_to_kernel(Yv @ Xp, X, normal_chol, clip, log)


def operator_to_kernel(
    P_hat: torch.Tensor,
    X: torch.Tensor,
    normal_chol: torch.Tensor,
    clip: float = DEFAULT_CLIP,
    log: bool = True,
    JX: torch.Tensor | None = None,
) -> torch.Tensor:
    """The second half of :func:`inversion_kernel`: Â: [G, d, d] from the estimated mixing
    operators P̂ = Y V⁻¹ X⁺: [G, B, n, n] (``log``: of a softmax, else linear). ``JX``: the
    centred tokens J X when the caller reuses them across calls.

    The right side Σ_b X_bᵀ L̂_b J X_b with L̂_b = log(P̂_b) J is Σ_b X_bᵀ log(P̂_b) (J X_b), as
    J² = J: one n × n product a sequence, not three."""
    n, d = X.shape[-2:]
    JX = centering(n, X.dtype) @ X if JX is None else JX
    L = torch.log(P_hat.clamp_min(clip)) if log else P_hat
    rhs = torch.einsum("gbji,gbjk->gik", X, L @ JX).reshape(X.shape[0], d * d, 1)
    return torch.cholesky_solve(rhs, normal_chol).reshape(X.shape[0], d, d)


def inversion_spectrum(
    X: torch.Tensor,
    Y: torch.Tensor,
    V: torch.Tensor | None,
    normal_chol: torch.Tensor,
    clip: float = DEFAULT_CLIP,
    log: bool = True,
    Xp: torch.Tensor | None = None,
) -> torch.Tensor:
    """svd(Â) of :func:`inversion_kernel`: [G, d]."""
    return _desc_svdvals(inversion_kernel(X, Y, V, normal_chol, clip, log, Xp))


def causal_inversion_kernel(
    X: torch.Tensor, Y: torch.Tensor, V: torch.Tensor | None, clip: float = DEFAULT_CLIP
) -> torch.Tensor:
    """Â: [G, d, d] of P_invert under a causal mask (docs/method.md §3), X, Y: [G, B, n, d].

    P̂ = Y V⁻¹ X⁺ is the masked attention matrix (exact for n ≤ d); on its lower triangle
    ℓ_ij = log P̂_ij = x_iᵀ A x_j β/√d − lse_i, and centring each row over its own j ≤ i removes
    lse_i: ℓ_ij − mean_{j'≤i} ℓ_ij' = x_iᵀ A (x_j − x̄_{≤i}) β/√d. Least squares over every
    (i, j ≤ i): N = Σ_i x_i x_iᵀ ⊗ G_i with G_i = Σ_{j≤i} (x_j − x̄_{≤i})(x_j − x̄_{≤i})ᵀ, and the
    right side Σ_i x_i ⊗ Σ_{j≤i} ℓ_ij (x_j − x̄_{≤i}) (the centring of ℓ is then implicit)."""
    G, B, n, d = X.shape
    Yv = Y if V is None else Y @ torch.linalg.inv(V)
    mask = torch.tril(torch.ones(n, n, dtype=X.dtype))
    ell = torch.log((Yv @ token_pinv_exact(X)).clamp_min(clip)) * mask
    count = torch.arange(1, n + 1, dtype=X.dtype)[:, None]
    xbar = X.cumsum(-2) / count  # x̄_{≤i}: [G, B, n, d]
    moment = (X[..., :, None] * X[..., None, :]).cumsum(-3)  # Σ_{j≤i} x_j x_jᵀ
    Gi = moment - count[..., None] * xbar[..., :, None] * xbar[..., None, :]
    r = ell @ X - ell.sum(-1, keepdim=True) * xbar  # Σ_{j≤i} ℓ_ij (x_j − x̄_{≤i})
    rows = B * n
    xx = (X[..., :, None] * X[..., None, :]).reshape(G, rows, d * d)
    N = (xx.transpose(1, 2) @ Gi.reshape(G, rows, d * d)).reshape(G, d, d, d, d)
    N = N.permute(0, 1, 3, 2, 4).reshape(G, d * d, d * d)
    rhs = torch.einsum("gbia,gbik->gak", X, r).reshape(G, d * d, 1)
    chol, info = torch.linalg.cholesky_ex(N)
    if bool((info != 0).any()):
        raise ValueError(
            "P_invert (causal): the least squares for A is singular; supply more sequences"
        )
    return torch.cholesky_solve(rhs, chol).reshape(G, d, d)


def predict_inversion(X, Y, V=None, *, clip: float = DEFAULT_CLIP, causal: bool = False) -> dict:
    """P_invert (softmax attention, value known, n ≤ d): ``spectrum`` [G, d] of Â; ``causal``:
    under a lower-triangular mask (:func:`causal_inversion_kernel`)."""
    X, Y, single = _as_groups(X, Y, "P_invert")
    G, B, n, d = X.shape
    if n > d:
        raise ValueError(
            f"P_invert needs n <= d so that X⁺ inverts the tokens exactly, got n = {n} > d = {d}"
        )
    pairs = n * (n - 1) // 2 if causal else n * (n - 1)  # equations per sequence
    if B * pairs < d * d:
        raise ValueError(
            f"P_invert: least squares for A needs B·{'n(n−1)/2' if causal else 'n·(n−1)'} >= d² "
            f"equations; got B = {B} sequences (need at least {-(-d * d // pairs)})"
        )
    Vt = None if V is None else torch.as_tensor(np.asarray(V), dtype=torch.float64)
    if Vt is not None and Vt.shape[-2:] != (d, d):
        raise ValueError(
            f"P_invert: the value map must be [d, d] = [{d}, {d}], got {tuple(Vt.shape)}"
        )
    if causal:
        return {"spectrum": _out(_desc_svdvals(causal_inversion_kernel(X, Y, Vt, clip)), single)}
    chol, info = torch.linalg.cholesky_ex(inversion_normal_matrix(X))
    if bool((info != 0).any()):
        raise ValueError("P_invert: the least squares for A is singular; supply more sequences")
    return {"spectrum": _out(inversion_spectrum(X, Y, Vt, chol, clip), single)}
