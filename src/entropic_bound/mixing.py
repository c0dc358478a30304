"""Token-mixing operators M(X) of every ladder rung (SCIENCE.md §1).

One function serves the teacher (which generates the data) and the student (which is
trained), so the two can never disagree about a class. All functions broadcast over
leading batch axes: ``X: [..., n, d]``, ``kernel: [..., k, k]`` (k = n for the static
rungs L0/L1, k = d for the query-key rungs), ``P: [..., n, d]``.
"""

from __future__ import annotations

import math
import re

import torch

#: rungs with an n×n kernel that does not look at the input
STATIC_RUNGS = ("L0", "L1")
#: rungs whose operator is a row-softmax (log-inversion applies to them)
SOFTMAX_CLASSES = ("L1", "L2", "Lam", "L4")

_LAM = re.compile(r"^Lam(\d+(?:\.\d+)?)$")


def rung_name(cls: str, lam: float | None = None) -> str:
    """Table name of a rung: ``L0`` … ``L4`` or ``Lam0.50`` for the interpolation rungs."""
    if cls == "Lam":
        return f"Lam{float(lam):.2f}"
    return cls


def parse_rung(rung: str) -> tuple[str, float | None]:
    """``"Lam0.50" -> ("Lam", 0.5)``, ``"L3" -> ("L3", None)``."""
    m = _LAM.match(rung)
    if m:
        return "Lam", float(m.group(1))
    if rung in ("L0", "L1", "L2", "L3", "L4"):
        return rung, None
    raise ValueError(f"unknown rung {rung!r}; use L0..L4 or Lam<lambda> such as Lam0.50")


def ladder_lambda(rung: str) -> float | None:
    """Position of a query-key rung on the interpolation ladder (L2 = 0, L4 = 1)."""
    cls, lam = parse_rung(rung)
    return {"L2": 0.0, "L4": 1.0, "Lam": lam}.get(cls)


def is_softmax(rung: str) -> bool:
    return parse_rung(rung)[0] in SOFTMAX_CLASSES


def kernel_dim(rung: str, n: int, d: int) -> int:
    return n if parse_rung(rung)[0] in STATIC_RUNGS else d


def kernel_norm(rung: str, n: int, d: int, gain: float) -> float:
    """Frobenius norm that gives every class an output variance ≈ gain²."""
    cls, _ = parse_rung(rung)
    if cls == "L0":
        return gain * math.sqrt(n)
    if cls == "L1":
        return gain * n
    return gain * math.sqrt(d)


def mixing_operator(rung: str, X: torch.Tensor, kernel: torch.Tensor, *, beta: float = 1.0,
                    P: torch.Tensor | None = None) -> torch.Tensor:
    """M(X): [..., n, n] for ``X: [..., n, d]`` and the rung's kernel."""
    cls, lam = parse_rung(rung)
    n, d = X.shape[-2], X.shape[-1]
    if cls == "L0":
        return kernel
    if cls == "L1":
        return torch.softmax(beta * kernel, dim=-1)
    if cls == "L3":
        return X @ kernel @ X.transpose(-1, -2) / n
    scale = beta / math.sqrt(d)
    if cls == "L4":
        return torch.softmax(scale * (X @ kernel @ X.transpose(-1, -2)), dim=-1)
    if P is None:
        raise ValueError(f"rung {rung} needs the positional embedding P")
    static = P @ kernel @ P.transpose(-1, -2)
    if cls == "L2":
        return torch.softmax(scale * static, dim=-1)
    dynamic = X @ kernel @ X.transpose(-1, -2)
    return torch.softmax(scale * ((1 - lam) * static + lam * dynamic), dim=-1)


def apply_operator(rung: str, X: torch.Tensor, kernel: torch.Tensor, V: torch.Tensor, *,
                   beta: float = 1.0, P: torch.Tensor | None = None) -> torch.Tensor:
    """Y = M(X) X V: [..., n, d]."""
    return mixing_operator(rung, X, kernel, beta=beta, P=P) @ X @ V
