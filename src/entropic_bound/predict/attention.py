"""The attention-native predictor P_attn (docs/method.md §3): value-free, no training.

All predictors work in float64 on batches of independent groups:
``X, Y: [G, B, n, d]`` (G groups of B sequences) or ``[B, n, d]`` (one group), and return
a descending spectrum ``[G, k]`` (or ``[k]``) to feed to any estimator.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from entropic_bound.predict.base import (
    _as_groups,
    _out,
    centering,
)


class SingularTokens(RuntimeError):
    """A sequence whose token matrix X̃ is rank-deficient; ``index``: its flat batch position."""

    def __init__(self, index: int):
        super().__init__(f"singular token matrix (sequence {index} of the batch)")
        self.index = index


def _pinv_tokens(Xt: torch.Tensor) -> torch.Tensor:
    """X̃⁺: [..., d, n] for X̃: [..., n, d] of full rank, by the normal equations; a sequence whose
    Gram matrix Cholesky cannot factor gets its X̃⁺ by the SVD (:func:`_svd_pinv_where`)."""
    n, d = Xt.shape[-2:]
    # Cholesky of the (SPD) Gram matrix: batched LU solves are ~30x slower on CPU
    gram = Xt.transpose(-1, -2) @ Xt if n >= d else Xt @ Xt.transpose(-1, -2)
    chol, info = torch.linalg.cholesky_ex(gram)
    if n >= d:
        pinv = torch.cholesky_solve(Xt.transpose(-1, -2), chol)
    else:
        pinv = torch.cholesky_solve(Xt, chol).transpose(-1, -2)
    if bool((info != 0).any()):
        pinv = _svd_pinv_where(Xt, pinv, info != 0)
    return pinv


def _svd_pinv_where(Xt: torch.Tensor, pinv: torch.Tensor, failed: torch.Tensor) -> torch.Tensor:
    """``pinv`` with the rows where ``failed`` replaced by X̃⁺ from the SVD of X̃.

    The Gram matrix squares X̃'s condition number, so Cholesky fails once X̃'s passes ~1e8,
    well before X̃ is singular in float64: a square Gaussian X̃ (n = d) has a smallest singular
    value with density near zero, and among the 16 384 sequences of d = n = 64 tasks such a one
    turns up (docs/notebook.md, 2026-12-07). The SVD inverts it at X̃'s own condition number. A
    sequence is singular (:class:`SingularTokens`, its flat index) only where X̃'s smallest
    singular value is ≤ max(n, d)·eps·its largest (numpy's ``matrix_rank`` tolerance). The other
    sequences keep their Cholesky X̃⁺, bit for bit. A sequence holding NaN or inf, or whose Gram
    matrix under- or overflows float64, is refused as singular, as before."""
    n, d = Xt.shape[-2:]
    rows = torch.nonzero(failed.flatten()).flatten()
    sub = Xt.reshape(-1, n, d)[rows]
    refused = ~torch.isfinite(sub).all(-1).all(-1)  # no SVD of NaN or inf: refused as before
    U, S, Vh = torch.linalg.svd(torch.where(refused[:, None, None], 0.0, sub), full_matrices=False)
    info = torch.finfo(S.dtype)
    refused |= S[:, -1] <= S[:, 0] * max(n, d) * info.eps
    # a Gram matrix that under- or overflows (what the callers' diagnostics invert): as before
    refused |= (S[:, -1] ** 2 < info.tiny) | ~torch.isfinite(S[:, 0] ** 2)
    if bool(refused.any()):
        raise SingularTokens(int(rows[refused.nonzero()[0, 0]]))
    out = pinv.reshape(-1, d, n).clone()
    out[rows] = (Vh.transpose(-1, -2) / S[:, None, :]) @ U.transpose(-1, -2)
    return out.reshape(pinv.shape)


#: up to this n, X̃ = J X is formed as a product by the n × n matrix J (how the paper's tables,
#: n <= 128, were computed, kept bitwise); beyond it as X − 1x̄ᵀ, the same to rounding without an
#: n × n matrix or O(n²d) work per sequence (user data with thousands of tokens)
CENTRING_MATMUL_MAX = 256


def attention_native_tokens(X: torch.Tensor) -> torch.Tensor:
    """X̃ of P_attn: J X (tokens centred per sequence) when n > d, else X itself."""
    n, d = X.shape[-2:]
    if n <= d:
        return X
    if n <= CENTRING_MATMUL_MAX:
        return centering(n, X.dtype) @ X
    return X - X.mean(-2, keepdim=True)


def attention_native_pinv(X: torch.Tensor) -> torch.Tensor:
    """The per-sequence X̃⁺ of P_attn (X̃ = JX when n > d, else X): [..., d, n]."""
    return _pinv_tokens(attention_native_tokens(X))


def attention_native_sum(Z: torch.Tensor) -> torch.Tensor:
    """C = Σ_b Z_b Z_bᵀ over axis 1 of Z: [G, B, d, d] -> [G, d, d]."""
    return attention_native_gram(Z, Z)


def attention_native_eig(C: torch.Tensor) -> torch.Tensor:
    """sqrt(eig(C)), descending: [..., d, d] -> [..., d]."""
    return torch.linalg.eigvalsh(C).flip(-1).clamp_min(0).sqrt()


#: the Gram matrix's sequences per product on CPU: this many float64 elements (1 MB) per operand
#: block, so both transposed copies stay in cache (:func:`attention_native_gram`)
GRAM_BLOCK_ELEMENTS = 1 << 17


def attention_native_gram(Z1: torch.Tensor, Z2: torch.Tensor) -> torch.Tensor:
    """Σ_b Z1_b Z2_bᵀ: [G, d, d'] for Z1: [G, B, d, d_v], Z2: [G, B, d', d_v].

    ``einsum("gbij,gbkj->gik")`` forms both operands as contiguous copies, [G, d, B·d_v] and
    [G, B·d_v, d'] (the second transposes every Z2_b), and multiplies them once: at B = 16 384,
    d = 64 each copy is 0.5 GB of fresh pages, and the copies took twice the product's time. On
    CPU the same two copies are made a block of sequences at a time (1 MB each, in cache) and the
    block products summed into C in sequence order (``baddbmm_``): BLAS sums a product's K terms in
    order into its output, so the blocks give the single product's floats, bitwise (at least 16
    terms a block; tests/predict/test_attention_gram.py). 2.5-3x faster at B = 16 384
    (benchmarks/bench_gram.py); other devices and dtypes, and broadcast shapes, keep the einsum.
    """
    G, B, _, dv = Z1.shape
    if (
        Z1.device.type != "cpu"
        or Z1.dtype != torch.float64
        or Z2.dtype != torch.float64
        or Z2.shape[:2] != (G, B)
        or Z2.shape[-1] != dv
        or B == 0
    ):
        return torch.einsum("gbij,gbkj->gik", Z1, Z2)
    C = None
    for start, stop in gram_blocks(B, Z1.shape[2], dv):
        C = _add_block(C, Z1[:, start:stop], Z2[:, start:stop])
    return C


def gram_blocks(B: int, d: int, dv: int) -> list[tuple[int, int]]:
    """The sequence ranges of :func:`attention_native_gram`'s blocks on CPU ([G, B, d, d_v])."""
    block = max(GRAM_BLOCK_ELEMENTS // (d * dv), -(-16 // dv), 1)
    out, start = [], 0
    while start < B:
        stop = B if B - start < 2 * block else start + block  # the last block: the whole rest
        out.append((start, stop))
        start = stop
    return out


def _add_block(C, Z1: torch.Tensor, Z2: torch.Tensor) -> torch.Tensor:
    """C + Σ_b Z1_b Z2_bᵀ over one block (C None: the block's product)."""
    G = Z1.shape[0]
    A = Z1.transpose(1, 2).reshape(G, Z1.shape[2], -1).contiguous()
    R = Z2.transpose(-1, -2).reshape(G, -1, Z2.shape[2]).contiguous()
    return A @ R if C is None else C.baddbmm_(A, R)


def attention_native_spectrum_streamed(
    pinv: torch.Tensor, targets, rows: int, dv: int | None = None
) -> torch.Tensor:
    """:func:`attention_native_spectrum` of pinv: [G, B, d, n] (float64, CPU) and Y given by
    ``targets(start, stop)`` (Y[:, start:stop] as float64 [G, b, n, d_v]; ``dv``: d unless
    given): Z = X̃⁺ Y made at most ``rows`` sequences at a time (whole blocks of
    :func:`attention_native_gram`, at least one) and C summed block by block in sequence order,
    so no whole Y or Z is held. The products are per sequence, so C is bitwise the one call's
    (tests/predict/test_static_chunks.py); ``rows`` ≥ B: the one call."""
    G, B, d, _ = pinv.shape
    if rows >= B:
        return attention_native_spectrum(pinv, targets(0, B))
    blocks = gram_blocks(B, d, d if dv is None else dv)
    C, i = None, 0
    while i < len(blocks):
        lo, j = blocks[i][0], i + 1
        while j < len(blocks) and blocks[j][1] - lo <= rows:
            j += 1
        hi = blocks[j - 1][1]
        Z = pinv[:, lo:hi] @ targets(lo, hi)
        for a, b in blocks[i:j]:
            C = _add_block(C, Z[:, a - lo : b - lo], Z[:, a - lo : b - lo])
        i = j
    return attention_native_eig(C)


def attention_native_spectrum(pinv: torch.Tensor, Y: torch.Tensor) -> torch.Tensor:
    """sqrt(eig(Σ_b Z_b Z_bᵀ)), Z_b = X̃_b⁺ Y_b; pinv: [G, B, d, n], Y: [G, B, n, d] -> [G, d]."""
    return attention_native_eig(attention_native_sum(pinv @ Y))


@dataclass
class AttnAccumulator:
    """P_attn (docs/method.md §3) streamed: C = Σ_b Z_b Z_bᵀ summed batch by batch in float64, and,
    with ``diagnostics``, the sums a recommendation reads from the same pass (for G = 1 group).

    One batch through :meth:`add` is exactly :func:`predict_attention_native`; batches merged
    in file order give the same floats whatever the threads' timing. Working memory of one batch
    of b sequences: about 8·b·(3nd + d² + min(n, d)²) bytes, plus the G·d² of C.
    """

    n: int
    d: int
    groups: int = 1
    diagnostics: bool = False
    seen: int = 0
    C: torch.Tensor | None = None  # [G, d, d]
    C_even: torch.Tensor | None = None  # [G, d, d]: the part of C from even-numbered sequences
    x2: float = 0.0  # Σ ‖X_b‖²
    y2: float = 0.0  # Σ ‖Y_b‖²
    ybar2: float = 0.0  # Σ ‖ȳ_b‖² (ȳ_b: the sequence's mean target token)
    ybar: torch.Tensor | None = None  # Σ ȳ_b
    xbar: torch.Tensor | None = None  # Σ x̄_b
    resid: float = 0.0  # Σ ‖J Y_b − J X_b Z_b‖² (n > d): the per-sequence fit of Y on [1, X]
    trace: float = 0.0  # Σ tr(G_b⁻¹) of the factored Gram matrix, over ``traced`` sequences
    traced: int = 0
    zmax: float = 0.0  # the largest ‖Z_b‖² and its sequence
    zmax_index: int = -1

    def partial(self, X: torch.Tensor, Y: torch.Tensor, index=None, n_trace: int = 0) -> dict:
        """The sums over one batch X, Y: [G, b, n, d] float64 (sequences at positions ``index``
        of the file); tr(G_b⁻¹) over the first ``n_trace``. Pure: safe on worker threads."""
        b = X.shape[1]
        if self.diagnostics:  # before any factorisation: overflow is the clearer message
            x2 = float(torch.dot(X.flatten(), X.flatten()))
            y2 = float(torch.dot(Y.flatten(), Y.flatten()))
            if not (math.isfinite(x2) and math.isfinite(y2)):
                raise ValueError(
                    "P_attn: X or Y holds values so large that their squares overflow float64; "
                    "rescale X and Y (e.g. to unit variance)"
                )
        try:
            pinv = attention_native_pinv(X)
        except SingularTokens as exc:
            at = exc.index % b
            at = int(index[at]) if index is not None else at
            what = "centred tokens J X" if self.n > self.d else "tokens"
            raise ValueError(
                f"P_attn: sequence {at} has linearly dependent {what} (or values too small to "
                "tell apart), so it cannot be inverted; drop degenerate sequences (repeated or "
                "constant tokens) or rescale X"
            ) from None
        Z = pinv @ Y
        part = {"seen": b, "C": attention_native_sum(Z)}
        if not self.diagnostics:
            return part
        if not bool(torch.isfinite(Z).all()):
            raise ValueError("P_attn: X or Y values overflow float64 arithmetic; rescale X and Y")
        # the split-half signal (confidence.split_half): C of the even-numbered sequences, C − it
        # of the odd ones, the same sums whatever the batching
        pos = index if index is not None else torch.arange(b)
        even = torch.as_tensor(pos) % 2 == 0
        part["C_even"] = attention_native_sum(Z[:, even])
        xbar, ybar = X.mean(-2), Y.mean(-2)
        part.update(x2=x2, y2=y2, ybar2=float(torch.dot(ybar.flatten(), ybar.flatten())))
        part.update(ybar=ybar.sum((0, 1)), xbar=xbar.sum((0, 1)))
        if self.n > self.d:  # ‖JY − X̃Z‖² = ‖JY‖² − ⟨X̃ᵀY, Z⟩, as Z = (X̃ᵀX̃)⁻¹X̃ᵀY
            jy2 = (Y * Y).sum((-2, -1)) - self.n * (ybar * ybar).sum(-1)
            fit = ((attention_native_tokens(X).transpose(-1, -2) @ Y) * Z).sum((-2, -1))
            part["resid"] = float((jy2 - fit).clamp_min(0).sum())
        if n_trace > 0:
            Xt = attention_native_tokens(X[:, :n_trace])
            gram = Xt.transpose(-1, -2) @ Xt if self.n >= self.d else Xt @ Xt.transpose(-1, -2)
            part["trace"] = float(torch.linalg.inv(gram).diagonal(0, -2, -1).sum())
            part["traced"] = n_trace * X.shape[0]
        z2 = (Z * Z).sum((-2, -1)).flatten()
        top = int(torch.argmax(z2))
        part["zmax"] = float(z2[top])
        part["zmax_index"] = int(index[top % b]) if index is not None else top % b
        return part

    def merge(self, part: dict) -> None:
        """Add one batch's sums (``self.C`` starts as the first batch's C, bitwise)."""
        part = dict(part)
        if "zmax" in part:
            zmax, zmax_index = part.pop("zmax"), part.pop("zmax_index")
            if zmax > self.zmax:
                self.zmax, self.zmax_index = zmax, zmax_index
        for key, value in part.items():
            current = getattr(self, key)
            setattr(self, key, value if current is None else current + value)

    def add(self, X, Y, index=None, n_trace: int = 0) -> None:
        self.merge(self.partial(X, Y, index, n_trace))

    def spectrum(self) -> torch.Tensor:
        """sqrt(eig(C)), descending: [G, d]."""
        C = self.C if self.C is not None else torch.zeros(self.groups, self.d, self.d)
        return attention_native_eig(C.to(torch.float64))

    def conditioning(self, dominance: float) -> dict:
        """How much the single largest ‖Z_b‖² weighs in C (max over mean, and share).

        Near-singular token matrices (n close to d) amplify noise or softmax's non-linear part
        without bound (E[(X̃ᵀX̃)⁻¹] diverges at n = d), and then one sequence can hold most of C;
        flagged ``dominated`` from max/mean >= ``dominance``.
        """
        total = float(torch.diagonal(self.C, 0, -2, -1).sum()) if self.C is not None else 0.0
        ratio = self.zmax * self.seen / total if total > 0 else 0.0
        return {
            "max_over_mean": ratio,
            "max_share": self.zmax / total if total > 0 else 0.0,
            "sequence": self.zmax_index,
            "dominated": ratio >= dominance,
            "threshold": dominance,
        }


def predict_attention_native(X, Y) -> dict:
    """P_attn, the attention-native (value-free) predictor: ``spectrum`` [G, d] of X: [G, B, n, d],
    Y: [G, B, n, d_v] (any d_v: Z_b is d × d_v, C = Σ Z_b Z_bᵀ is d × d all the same).

    For linear attention and n ≥ d, Z_b = A (X_bᵀX_b/n) V so col(C) = col(A): exact whatever
    V is. Centring (n > d) removes softmax's uniform part, to first order in β. One batch of
    :class:`AttnAccumulator`, the streaming form ``entropic-bound predict`` uses.
    """
    X, Y, single = _as_groups(X, Y, "P_attn", any_dv=True)
    acc = AttnAccumulator(X.shape[-2], X.shape[-1], X.shape[0])
    acc.add(X, Y)
    return {"spectrum": _out(acc.spectrum(), single)}
