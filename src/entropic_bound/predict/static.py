"""P_static, the naive (value-free) Entropic Bound (docs/method.md §3): the least squares of a static
kernel (:class:`StaticLeastSquares`), the rearranged summary of the fitted operator, and its top
singular pair (dense, or by Lanczos for large n·d). :mod:`.predictors` re-exports the public
names.
"""

from __future__ import annotations

import numpy as np
import torch

from entropic_bound.predict.base import (
    DEFAULT_CLIP,
    _as_groups,
    _desc_svdvals,
    _out,
    log_inversion_spectrum,
)

#: P_static takes its dense route up to this n·d (the normal equations solved per call, the top
#: singular pair from a full eigendecomposition of the rearranged map's Gram matrix: exact and
#: cheap there, and the paper tables were made with it); above it, the factored route (the X side
#: factorised once and reused, the top pair by Lanczos), as at d = n = 64 the dense
#: eigendecomposition alone is a 4096 × 4096 eigh per call
STATIC_DENSE_MAX_ND = 256
#: the iterative top singular pair (s₁, u, v) of R has converged when ‖Rᵀu − s₁v‖ ≤ tol · s₁
#: (R v = s₁ u holds exactly by construction); u and v are then right to about tol / (relative gap)
TOP_PAIR_TOL = 1e-11
#: Lanczos steps before giving up (each costs one product with R and one with Rᵀ)
TOP_PAIR_MAX_ITER = 600
#: steps between convergence checks (each check is the SVD of a small bidiagonal matrix)
_CHECK_EVERY = 8


class TopPairNotConverged(RuntimeError):
    """The Lanczos iteration of :func:`top_singular_pair` missed its tolerance."""


def top_singular_pair(
    R: torch.Tensor, *, tol: float = TOP_PAIR_TOL, max_iter: int = TOP_PAIR_MAX_ITER
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Top singular pair of R: [m, k] -> (s₁, u: [m], v: [k]), with R v = s₁ u.

    Golub–Kahan–Lanczos bidiagonalisation with full reorthogonalisation (R V_j = U_j B_j,
    B_j upper bidiagonal) from a fixed start (a seeded Gaussian vector: deterministic, and not
    orthogonal to the top pair with probability one); the Ritz pair from svd(B_j) has residual
    ‖Rᵀu − s₁v‖ = β_j |p_j|, checked every few steps and once more explicitly at the end.
    Krylov methods converge in ~√(1/gap) steps where subspace iteration needs ~1/gap: the
    least-squares maps of attention tasks have flat spectra (share < 1 %). Raises
    :class:`TopPairNotConverged` when the residual is above tol·s₁ after max_iter steps.
    """
    m, k = R.shape
    if not bool(R.abs().max() > 0):
        return R.new_zeros(()), R.new_zeros(m), R.new_zeros(k)
    Rt = R.T  # a view: gemv reads R either way (a contiguous copy costs ~20 products)
    steps = min(max_iter, m + k)  # the Krylov spaces are exhausted well before m + k steps
    Vs, Us = R.new_zeros(steps + 1, k), R.new_zeros(steps, m)
    alpha, beta = R.new_zeros(steps), R.new_zeros(steps)
    gen = torch.Generator().manual_seed(0)
    v = torch.randn(k, generator=gen, dtype=R.dtype)
    Vs[0] = v / torch.linalg.vector_norm(v)
    res, j = float("inf"), 0
    for j in range(steps):
        u = R @ Vs[j] - (beta[j - 1] * Us[j - 1] if j else 0.0)
        u = u - Us[:j].T @ (Us[:j] @ u)  # full reorthogonalisation (twice is enough)
        u = u - Us[:j].T @ (Us[:j] @ u)
        alpha[j] = torch.linalg.vector_norm(u)
        Us[j] = u / torch.where(alpha[j] > 0, alpha[j], 1.0)
        v = Rt @ Us[j] - alpha[j] * Vs[j]
        v = v - Vs[: j + 1].T @ (Vs[: j + 1] @ v)
        v = v - Vs[: j + 1].T @ (Vs[: j + 1] @ v)
        beta[j] = torch.linalg.vector_norm(v)
        Vs[j + 1] = v / torch.where(beta[j] > 0, beta[j], 1.0)
        last = j + 1 == steps or beta[j] <= tol * alpha[: j + 1].max()
        if (j + 1) % _CHECK_EVERY and not last:
            continue
        B = torch.diag(alpha[: j + 1]) + torch.diag(beta[:j], 1)
        P, S, Qh = torch.linalg.svd(B)
        res = float(beta[j] * P[-1, 0].abs())
        if res <= tol * float(S[0]) or last:
            break
    s1, u, v = S[0], Us[: j + 1].T @ P[:, 0], Vs[: j + 1].T @ Qh[0]
    res = float(torch.linalg.vector_norm(Rt @ u - s1 * v))  # the explicit residual, to be sure
    if res > tol * float(s1):
        raise TopPairNotConverged(
            f"the top singular pair of a {m} × {k} matrix did not converge in {j + 1} "
            f"Lanczos steps (residual {res:.3g} > {tol:g} · s₁)"
        )
    return s1, u, v


#: P_static reads its sequences in chunks of at most this many bytes of float64 (512 MiB): every
#: shipped config up to d = 64 (B·n·d·8 ≤ 512 MiB) is one chunk, the products of before; at
#: d = n = 128 (2 GiB a float64 copy of X) four, so no whole float64 copy of X or Y is made
STATIC_CHUNK_BYTES = 1 << 29
#: a chunk's rows are a multiple of this: MKL's triangular solves give a column the same floats
#: whatever the other columns only in whole panels (chunks of 7 or 17 columns do not)
STATIC_CHUNK_ALIGN = 64


def static_chunk_rows(B: int, nd: int, chunk_bytes: int = STATIC_CHUNK_BYTES) -> int:
    """Sequences per chunk of P_static's sums over B sequences of n·d values: B when a float64
    copy of all of them fits ``chunk_bytes`` (one chunk: the products of the whole sample), else
    the most that fit, a multiple of :data:`STATIC_CHUNK_ALIGN` (at least one multiple)."""
    rows = chunk_bytes // (8 * nd)
    if rows >= B:
        return B
    return max(STATIC_CHUNK_ALIGN, rows // STATIC_CHUNK_ALIGN * STATIC_CHUNK_ALIGN)


def static_chunks(B: int, rows: int) -> list[tuple[int, int]]:
    """[(lo, hi)] covering 0..B, ``rows`` sequences each, a tail of fewer than
    :data:`STATIC_CHUNK_ALIGN` merged into the chunk before it (MKL multiplies or solves a single
    column by another kernel than a panel's: its floats differ)."""
    bounds = [(lo, min(B, lo + rows)) for lo in range(0, B, rows)]
    if len(bounds) > 1 and bounds[-1][1] - bounds[-1][0] < STATIC_CHUNK_ALIGN:
        bounds[-2:] = [(bounds[-2][0], B)]
    return bounds


def chunked_gram(a: torch.Tensor, b: torch.Tensor, rows: int) -> torch.Tensor:
    """Σ_i a_iᵀ b_i: [G, p, q] for a: [G, B, p], b: [G, B, q] (any float dtype), ``rows`` sequences
    at a time, each chunk widened to float64 and its product added in sequence order
    (``baddbmm_``). MKL sums a product's terms in order into its output, so the chunks give the
    floats of the one product ``aᵀ b`` (tests/predict/test_static_chunks.py)."""
    out = None
    for lo, hi in static_chunks(a.shape[1], rows):
        ac = a[:, lo:hi].to(torch.float64)
        bc = ac if b is a else b[:, lo:hi].to(torch.float64)
        act = ac.transpose(1, 2)
        out = act @ bc if out is None else out.baddbmm_(act, bc)
    return out


class StaticLeastSquares:
    """P_static's least squares with its X side factorised once: K(Y) = (Σ x xᵀ)⁻¹ Σ x yᵀ.

    x = vec(X_b) (row-major), X: [B, n, d] or [G, B, n, d], in any float dtype: the sums over
    sequences read ``chunk_rows`` of them at a time (:func:`static_chunk_rows`), each chunk widened
    to float64, so a float32 X (as a task file stores it) is never copied whole to float64; the
    results are those of the float64 products over the whole sample, bitwise. Tasks that share
    their inputs (the rungs of one (r*, seed), and a task's noisy copies) reuse one
    factorisation. Needs B ≥ nd. ``keep_gram``: keep Σ x xᵀ ([G, nd, nd], float64) as ``gram``
    (predict/stage.py writes it for the static rungs' best bounds); else it is freed once
    factorised.
    """

    def __init__(self, X, keep_gram: bool = False, chunk_rows: int | None = None):
        X, _, self.single = _as_groups(X, X, "P_static", keep_dtype=True)
        G, B, n, d = X.shape
        if B < n * d:
            raise ValueError(
                f"P_static: least squares over vec(X) needs at least n*d = {n * d} sequences, got {B}"
            )
        self.n, self.d = n, d
        self.rows = static_chunk_rows(B, n * d) if chunk_rows is None else int(chunk_rows)
        if self.rows < 1:
            raise ValueError(f"P_static: chunk_rows must be >= 1, got {chunk_rows}")
        self.x = X.reshape(G, B, n * d)
        gram = chunked_gram(self.x, self.x, self.rows)
        self.chol, info = torch.linalg.cholesky_ex(gram)
        self.gram = gram if keep_gram else None
        if bool((info != 0).any()):
            raise ValueError(
                "P_static: the inputs vec(X) are linearly dependent; supply more or "
                "more varied sequences"
            )
        self._pinv = None
        self._kept_operators: list[tuple[object, torch.Tensor]] = []

    @property
    def dense(self) -> bool:
        return self.n * self.d <= STATIC_DENSE_MAX_ND

    def operator(
        self, Y, *, dense: bool | None = None, noise=None, scale: float = 0.0
    ) -> torch.Tensor:
        """K: [G, nd, nd] with vec(Y_b) ≈ K vec(X_b); Y: the shape of X.

        With ``noise`` (the shape of Y): K of the noisy copy Y + scale·noise. The dense route
        forms that copy (as the caller would, in float64); the factored route uses linearity,
        K(Y) + scale·K(noise), with K(Y) and K(noise) kept for the next call (the copies of a task
        at several σ, and the tasks that share X and its noise draw, each cost one product).
        """
        dense = self.dense if dense is None else dense
        if dense:
            if noise is not None and scale:
                Y = np.asarray(Y) + scale * np.asarray(noise)
            return self._compute(Y, dense=True)
        if noise is not None and scale:
            # K(Y) + scale·K(noise) in one new array (addition commutes: the same floats); K(Y)
            # first, so that the noise's K stays the one used last
            K_y = self._kept(Y)
            return (self._kept(noise) * scale).add_(K_y)
        return self._kept(Y)

    def _compute(self, Y, *, dense: bool) -> torch.Tensor:
        _, Y, _ = _as_groups(Y, Y, "P_static", keep_dtype=True)
        if Y.shape[:-2] != self.x.shape[:-1] or Y.shape[-2] != self.n:
            raise ValueError(
                f"P_static: Y must have the shape of X but for its last axis (d_v), "
                f"[.., {self.x.shape[1]}, {self.n}, d_v], got {tuple(Y.shape)}"
            )
        y = Y.reshape(*self.x.shape[:-1], self.n * Y.shape[-1])
        if dense:
            return torch.cholesky_solve(chunked_gram(self.x, y, self.rows), self.chol).transpose(
                1, 2
            )
        if self._pinv is None:  # x⁺ = (xᵀx)⁻¹xᵀ once: then each Y costs one product
            self._pinv = self._pseudo_inverse()
        return self._pinv_product(y).transpose(1, 2)

    def _pseudo_inverse(self) -> torch.Tensor:
        """x⁺ = (xᵀx)⁻¹xᵀ: [G, nd, B], its columns solved a chunk of sequences at a time (each
        column's floats do not depend on the others', in chunks of whole panels)."""
        G, B, nd = self.x.shape
        if len(static_chunks(B, self.rows)) == 1:
            return torch.cholesky_solve(self.x.to(torch.float64).transpose(1, 2), self.chol)
        pinv = torch.empty(G, nd, B, dtype=torch.float64)
        for lo, hi in static_chunks(B, self.rows):
            xc = self.x[:, lo:hi].to(torch.float64)
            pinv[:, :, lo:hi] = torch.cholesky_solve(xc.transpose(1, 2), self.chol)
        return pinv

    def _pinv_product(self, y: torch.Tensor) -> torch.Tensor:
        """x⁺ y: [G, nd, n·d_v], summed over chunks of sequences in order (the one product's
        floats: :func:`chunked_gram`), each chunk of y widened to float64."""
        out = None
        for lo, hi in static_chunks(y.shape[1], self.rows):
            pc = self._pinv[:, :, lo:hi]
            yc = y[:, lo:hi].to(torch.float64)
            out = pc @ yc if out is None else out.baddbmm_(pc, yc)
        return out

    def _kept(self, Y) -> torch.Tensor:
        """K(Y) on the factored route, remembered for the two arrays used last (by identity: the
        caller's array is held here, so its id cannot be reused while it is remembered; an array
        changed in place between calls would get its old K, so callers pass fresh arrays). A
        use moves an array to the end, so that a group's one noise draw, used by every task
        between their own Y, stays remembered (a cache by insertion order dropped it every
        other task: 2 of 9 products of d = 64's groups were made again)."""
        for i, (held, K) in enumerate(self._kept_operators):
            if held is Y:
                self._kept_operators.append(self._kept_operators.pop(i))
                return K
        K = self._compute(Y, dense=False)
        self._kept_operators = [*self._kept_operators[-1:], (Y, K)]
        return K


def static_operator(
    X,
    Y,
    *,
    method: str = "auto",
    lstsq: StaticLeastSquares | None = None,
    noise=None,
    scale: float = 0.0,
) -> dict[str, np.ndarray]:
    """Least-squares static map and its Van Loan–Pitsianis rank-1 summary.

    Regress vec(Y) on vec(X) (row-major, K: [nd, nd] = M ⊗ Vᵀ for a static task), rearrange
    K into R: [n², d²] whose rank-1 part is vec(M) vec(Vᵀ)ᵀ, and return M̂ (its top left
    singular vector, sign fixed so that the entries sum positive) and the static-fit share
    s₁²/Σs² of R (1 for a static task). Needs B ≥ nd sequences per group.

    ``method``: ``dense`` (full eigendecomposition), ``iterative`` (:func:`top_singular_pair`,
    share = s₁² / ‖K‖_F²) or ``auto`` (dense up to n·d = STATIC_DENSE_MAX_ND). ``lstsq``: a
    factorisation of the same X to reuse. ``noise``, ``scale``: fit the noisy copy
    Y + scale·noise (see :meth:`StaticLeastSquares.operator`).
    """
    if method not in ("auto", "dense", "iterative"):
        raise ValueError(f"P_static: method must be auto, dense or iterative, got {method!r}")
    lstsq = StaticLeastSquares(X) if lstsq is None else lstsq
    dense = lstsq.dense if method == "auto" else method == "dense"
    K = lstsq.operator(Y, noise=noise, scale=scale)
    dv = K.shape[-2] // lstsq.n  # K: [G, n·d_v, n·d]
    return rearranged_summary(K, lstsq.n, lstsq.d, lstsq.single, dense=dense, dv=dv)


def rearranged_summary(
    K: torch.Tensor,
    n: int,
    d: int,
    single: bool = False,
    dense: bool = True,
    dv: int | None = None,
) -> dict:
    """Van Loan–Pitsianis summary of static maps K: [G, n·d_v, n·d] (d_v = d unless given):
    ``M_hat`` [G, n, n] and the ``static_fit_share`` [G] (see :func:`static_operator`); ``single``
    drops the group axis; ``dense``: full eigendecomposition, else the iterative top pair. With
    d_v ≠ d, Y = M X V for V: [d, d_v] is K = M ⊗ Vᵀ all the same, and R: [n², d_v·d]."""
    G = K.shape[0]
    dv = d if dv is None else dv
    R = K.reshape(G, n, dv, n, d).permute(0, 1, 3, 2, 4).reshape(G, n * n, dv * d)
    if dense:
        u, share = _top_pair_dense(R, n, d, dv)
    else:
        u, share = _top_pair_iterative(R, K)
    M_hat = u.reshape(G, n, n)
    # docs/method.md fixes the sign so that M̂'s row sums are positive; for a rank-one summary
    # only a global sign is free, so we make the total (the sum of the row sums) positive
    sign = torch.sign(M_hat.sum((-1, -2)))
    M_hat = M_hat * torch.where(sign == 0, 1.0, sign)[:, None, None]
    return {"M_hat": _out(M_hat, single), "static_fit_share": _out(share, single)}


def _top_pair_dense(
    R: torch.Tensor, n: int, d: int, dv: int | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """vec(M̂)·s₁ and the share from the smaller Gram matrix (n² × n² or d·d_v × d·d_v)."""
    if n * n <= d * (d if dv is None else dv):
        evals, evecs = torch.linalg.eigh(R @ R.transpose(1, 2))  # ascending, [G, n²]
        u = evecs[:, :, -1:] * evals[:, -1:].clamp_min(0).sqrt()[:, None]  # vec(M̂) · s₁
    else:
        evals, evecs = torch.linalg.eigh(R.transpose(1, 2) @ R)  # ascending, [G, d²]
        u = R @ evecs[:, :, -1:]  # vec(M̂) · s₁
    top = evals[:, -1].clamp_min(0)
    total = evals.clamp_min(0).sum(-1)
    share = torch.where(total > 0, top / torch.where(total > 0, total, 1.0), torch.zeros_like(top))
    return u, share


def _top_pair_iterative(R: torch.Tensor, K: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """vec(M̂)·s₁ and the share s₁² / ‖R‖_F² (‖R‖_F = ‖K‖_F: no Gram matrix, no decomposition)."""
    us, shares = [], []
    for Rg, Kg in zip(R, K):
        s1, u, _ = top_singular_pair(Rg)
        total = torch.dot(Kg.flatten(), Kg.flatten())  # ‖K‖_F², without a squared copy
        us.append(u * s1)
        shares.append(s1**2 / total if total > 0 else total)
    return torch.stack(us), torch.stack(shares)


def predict_static(
    X,
    Y,
    *,
    softmax: bool = False,
    clip: float = DEFAULT_CLIP,
    method: str = "auto",
    lstsq: StaticLeastSquares | None = None,
    noise=None,
    scale: float = 0.0,
) -> dict:
    """P_static, the naive (value-free) Entropic Bound.

    Returns ``spectrum`` ([G, n]: svd(M̂) for linear classes, the log-inversion spectrum for
    softmax classes), ``static_fit_share`` ([G]) and ``M_hat`` ([G, n, n]). ``method``,
    ``lstsq``, ``noise`` and ``scale`` as for :func:`static_operator`.
    """
    out = static_operator(X, Y, method=method, lstsq=lstsq, noise=noise, scale=scale)
    M = torch.as_tensor(out["M_hat"])
    spec = log_inversion_spectrum(M, clip) if softmax else _desc_svdvals(M)
    out["spectrum"] = spec.numpy()
    return out
