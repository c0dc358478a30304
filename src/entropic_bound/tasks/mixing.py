"""Token-mixing operators M(X) of every ladder rung (docs/method.md §1).

One function serves the teacher (which generates the data) and the student (which is
trained), so the two can never disagree about a class. All functions broadcast over
leading batch axes: ``X: [..., n, d]``, ``kernel: [..., k, k]`` (k = n for the static
rungs L0/L1, k = d for the query-key rungs), ``P: [..., n, d]``.
"""

from __future__ import annotations

import math

import torch

from entropic_bound.core.rungs import parse_rung


def _rmul(X: torch.Tensor, A: torch.Tensor) -> torch.Tensor:
    """X @ A for X: [..., B, n, d] and A: [..., 1, d, e] as one GEMM per leading index.

    Broadcasting A over B would run B tiny matrix products per student; folding B into the
    rows runs one [B·n, d] × [d, e] product instead (about 10x faster on CPU).
    """
    if A.ndim == X.ndim and A.shape[-3] == 1 and X.shape[-3] > 1:
        lead = X.shape[:-2]
        out = X.reshape(*X.shape[:-3], -1, X.shape[-1]) @ A.squeeze(-3)
        return out.view(*lead, X.shape[-2], A.shape[-1])
    return X @ A


def _lmul(M: torch.Tensor, X: torch.Tensor) -> torch.Tensor:
    """M @ X for a static M: [..., 1, n, n] and X: [..., B, n, d] as one GEMM per leading index."""
    if M.ndim == X.ndim and M.shape[-3] == 1 and X.shape[-3] > 1:
        B, n, d = X.shape[-3:]
        Xt = X.transpose(-3, -2).reshape(*X.shape[:-3], n, B * d)
        return (M.squeeze(-3) @ Xt).view(*X.shape[:-3], n, B, d).transpose(-3, -2)
    return M @ X


def _bilinear(X: torch.Tensor, kernel: torch.Tensor) -> torch.Tensor:
    """X A Xᵀ: [..., n, n]."""
    return _rmul(X, kernel) @ X.transpose(-1, -2)


def mixing_operator(
    rung: str,
    X: torch.Tensor,
    kernel: torch.Tensor,
    *,
    beta: float = 1.0,
    P: torch.Tensor | None = None,
) -> torch.Tensor:
    """M(X) = act(bias + X A Xᵀ): [..., n, n] for ``X: [..., n, d]`` (terms: :func:`operator_terms`)."""
    A, bias, softmax = operator_terms(rung, kernel, n=X.shape[-2], d=X.shape[-1], beta=beta, P=P)
    if A is None:
        Z = bias
    else:
        Z = _bilinear(X, A) if bias is None else bias + _bilinear(X, A)
    return torch.softmax(Z, dim=-1) if softmax else Z


def static_mixing(
    rung: str,
    kernel: torch.Tensor,
    *,
    n: int,
    d: int,
    beta: float = 1.0,
    P: torch.Tensor | None = None,
) -> torch.Tensor:
    """M = act(bias): [..., n, n], the mixing matrix of a rung whose operator does not look at
    the input (L0, L1, L2: :func:`operator_terms` with no A). ValueError for the others."""
    A, bias, softmax = operator_terms(rung, kernel, n=n, d=d, beta=beta, P=P)
    if A is not None:
        raise ValueError(f"rung {rung} mixes by its input (X A Xᵀ): no static mixing matrix")
    return torch.softmax(bias, dim=-1) if softmax else bias


def operator_terms(
    rung: str,
    kernel: torch.Tensor,
    *,
    n: int,
    d: int,
    beta: float = 1.0,
    P: torch.Tensor | None = None,
):
    """Every rung's operator in one form, M(X) = act(bias + X A Xᵀ), shared by the teacher, the
    torch student (:func:`mixing_operator`) and the fused kernel.

    Returns ``(A, bias, softmax)`` with ``A: [..., d, d]`` or None (static rungs) and
    ``bias: [..., n, n]`` or None (no input-independent logits). The temperature is folded into
    the (small) kernel rather than the [..., n, n] logits.
    """
    cls, lam = parse_rung(rung)
    scale = beta / math.sqrt(d)
    if cls == "L0":
        return None, kernel, False
    if cls == "L1":
        return None, beta * kernel, True
    if cls == "L3":
        return kernel / n, None, False
    if cls == "L4":
        return scale * kernel, None, True
    if P is None:
        raise ValueError(f"rung {rung} needs the positional embedding P")
    if cls == "L2":
        return None, P @ (scale * kernel) @ P.transpose(-1, -2), True
    return lam * scale * kernel, P @ ((1 - lam) * scale * kernel) @ P.transpose(-1, -2), True


def bilinear_coefficient(rung: str, *, n: int, d: int, beta: float = 1.0) -> float:
    """c with :func:`operator_terms`' A = c · kernel (0 for the rungs without A: L0, L1, L2).

    The fused kernel's factored path takes A as (c Q) Kᵀ from this (equal to operator_terms' A
    up to rounding; tests check every rung)."""
    cls, lam = parse_rung(rung)
    scale = beta / math.sqrt(d)
    if cls == "L3":
        return 1 / n
    if cls == "L4":
        return scale
    return lam * scale if cls == "Lam" else 0.0


def operator_terms_adjoint(
    rung: str,
    dA: torch.Tensor | None,
    dbias: torch.Tensor | None,
    *,
    n: int,
    d: int,
    beta: float = 1.0,
    P: torch.Tensor | None = None,
) -> torch.Tensor:
    """Gradient with respect to the kernel, given the gradients of :func:`operator_terms`' A and
    bias (both terms are linear in the kernel, so this is the adjoint of that linear map)."""
    cls, lam = parse_rung(rung)
    scale = beta / math.sqrt(d)
    if cls == "L0":
        return dbias
    if cls == "L1":
        return beta * dbias
    if cls == "L3":
        return dA / n
    if cls == "L4":
        return scale * dA
    static = P.transpose(-1, -2) @ dbias @ P
    if cls == "L2":
        return scale * static
    return (lam * scale) * dA + ((1 - lam) * scale) * static


def apply_operator(
    rung: str,
    X: torch.Tensor,
    kernel: torch.Tensor,
    V: torch.Tensor,
    *,
    beta: float = 1.0,
    P: torch.Tensor | None = None,
) -> torch.Tensor:
    """Y = M(X) X V: [..., n, d]."""
    M = mixing_operator(rung, X, kernel, beta=beta, P=P)
    return _rmul(_lmul(M, X), V)
