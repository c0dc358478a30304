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
) -> torch.Tensor:
    """The second half of :func:`inversion_kernel`: Â: [G, d, d] from the estimated mixing
    operators P̂ = Y V⁻¹ X⁺: [G, B, n, n] (``log``: of a softmax, else linear)."""
    n, d = X.shape[-2:]
    J = centering(n, X.dtype)
    L = (torch.log(P_hat.clamp_min(clip)) if log else P_hat) @ J
    rhs = torch.einsum("gbji,gbjk->gik", X, L @ J @ X).reshape(X.shape[0], d * d, 1)
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


def predict_inversion(X, Y, V=None, *, clip: float = DEFAULT_CLIP) -> dict:
    """P_invert (softmax attention, value known, n ≤ d): ``spectrum`` [G, d] of Â."""
    X, Y, single = _as_groups(X, Y, "P_invert")
    G, B, n, d = X.shape
    if n > d:
        raise ValueError(
            f"P_invert needs n <= d so that X⁺ inverts the tokens exactly, got n = {n} > d = {d}"
        )
    if B * n * (n - 1) < d * d:
        raise ValueError(
            f"P_invert: least squares for A needs B·n·(n−1) >= d² equations; "
            f"got B = {B} sequences (need at least {-(-d * d // (n * (n - 1)))})"
        )
    Vt = None if V is None else torch.as_tensor(np.asarray(V), dtype=torch.float64)
    if Vt is not None and Vt.shape[-2:] != (d, d):
        raise ValueError(
            f"P_invert: the value map must be [d, d] = [{d}, {d}], got {tuple(Vt.shape)}"
        )
    chol, info = torch.linalg.cholesky_ex(inversion_normal_matrix(X))
    if bool((info != 0).any()):
        raise ValueError("P_invert: the least squares for A is singular; supply more sequences")
    return {"spectrum": _out(inversion_spectrum(X, Y, Vt, chol, clip), single)}
