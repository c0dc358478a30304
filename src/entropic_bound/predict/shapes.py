"""The shapes ``entropic-bound predict`` accepts: X [B, n, d] and Y [B, n, d_v] or
[B, H, n, d_v] (H heads sharing X), checked before any work; one head as a source."""

from __future__ import annotations

from dataclasses import dataclass

from entropic_bound.predict.sources import InputError


@dataclass(frozen=True)
class Shape:
    """B sequences of n tokens, X of d and Y of d_v dimensions; ``heads``: H of Y [B, H, n, d_v]
    (None: Y is [B, n, d_v])."""

    B: int
    n: int
    d: int
    dv: int
    heads: int | None = None


def validate_shapes(X, Y) -> Shape:
    """The shape of two array sources, or the reason they cannot be predicted from."""
    for ref in (X, Y):
        ref.check()
        if not ref.numeric:
            raise InputError(
                f"{ref.where()} has dtype {ref.dtype}, not real numbers",
                "save X and Y as float32 or float64 arrays",
            )
    if len(X.shape) != 3:
        raise InputError(
            f"{X.where()} has {len(X.shape)} dimensions (shape {X.shape}), expected 3: "
            "[B sequences, n tokens, d dimensions]",
            "reshape it to [B, n, d] (one sequence is [1, n, d]; heads share X)",
        )
    if len(Y.shape) not in (3, 4):
        raise InputError(
            f"{Y.where()} has {len(Y.shape)} dimensions (shape {Y.shape}), expected 3 or 4: "
            "[B sequences, n tokens, d_v dimensions], or [B, H heads, n, d_v]",
            "reshape it to [B, n, d_v] or [B, H, n, d_v]",
        )
    heads = Y.shape[1] if len(Y.shape) == 4 else None
    tokens = (Y.shape[0], Y.shape[-2])
    if tokens != X.shape[:2] or heads == 0:
        raise InputError(
            f"X has shape {X.shape} but Y has shape {Y.shape}",
            "Y must hold one target per token of X: [B, n, d_v] or [B, H, n, d_v] with X's "
            "B and n (d_v may differ from d)",
        )
    B, n, d = X.shape
    dv = Y.shape[-1]
    if B == 0 or d == 0 or dv == 0:
        raise InputError(
            f"X and Y have shapes {X.shape} and {Y.shape}: no "
            f"{'sequences' if B == 0 else 'dimensions'}",
            "give at least one sequence of tokens with d >= 1 and d_v >= 1",
        )
    if n < 2:
        raise InputError(
            f"sequences have n = {n} token; attention mixes tokens, so every predictor needs n >= 2",
            "give sequences of at least 2 tokens",
        )
    return Shape(B, n, d, dv, heads)


def head_source(Y, shape: Shape, head: int | None):
    """Head ``head`` of Y [B, H, n, d_v] as a [B, n, d_v] source."""
    if head is None:
        raise InputError(
            f"Y has {shape.heads} heads ([B, H, n, d_v] = {Y.shape}) but no head was chosen",
            "predict every head with entropic-bound predict (one row per head), or pass head=h",
        )
    if not 0 <= head < shape.heads:
        raise InputError(f"--head {head}: Y has heads 0 … {shape.heads - 1}", "choose one of them")
    return HeadSource(Y, head)


class HeadSource:
    """One head of a [B, H, n, d_v] source, read in the same chunks (the interface of ArrayRef)."""

    def __init__(self, Y, head: int):
        self.Y, self.head = Y, head
        self.shape = (Y.shape[0], *Y.shape[2:])
        self.dtype, self.numeric = Y.dtype, Y.numeric

    def where(self) -> str:
        return f"{self.Y.where()}, head {self.head}"

    def check(self) -> None:
        self.Y.check()

    def rows(self, k: int):
        for start, block in self.Y.rows(k):
            yield start, block[:, self.head]
