"""Data-only rank predictors: no training (SCIENCE.md §3).

All predictors work in float64 on batches of independent groups:
``X, Y: [G, B, n, d]`` (G groups of B sequences) or ``[B, n, d]`` (one group), and return
a descending spectrum ``[G, k]`` (or ``[k]``) to feed to any estimator.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

#: floor of the probabilities before the log-inversion of a softmax operator
DEFAULT_CLIP = 1e-12


def _as_groups(X, Y, name: str) -> tuple[torch.Tensor, torch.Tensor, bool]:
    X = torch.as_tensor(np.asarray(X) if not torch.is_tensor(X) else X, dtype=torch.float64)
    Y = torch.as_tensor(np.asarray(Y) if not torch.is_tensor(Y) else Y, dtype=torch.float64)
    single = X.ndim == 3
    if X.ndim not in (3, 4):
        raise ValueError(
            f"{name}: X must have shape [B, n, d] or [G, B, n, d], got {tuple(X.shape)}"
        )
    if X.shape != Y.shape:
        raise ValueError(
            f"{name}: X and Y must have the same shape, got {tuple(X.shape)} and {tuple(Y.shape)}"
        )
    if X.shape[-2] < 2:
        raise ValueError(f"{name}: sequences need n >= 2 tokens, got n = {X.shape[-2]}")
    if not (torch.isfinite(X).all() and torch.isfinite(Y).all()):
        raise ValueError(f"{name}: X or Y contains NaN or Inf")
    if single:
        X, Y = X.unsqueeze(0), Y.unsqueeze(0)
    return X, Y, single


def _out(t: torch.Tensor, single: bool) -> np.ndarray:
    t = t.detach().cpu().numpy()
    return t[0] if single else t


def centering(n: int, dtype=torch.float64) -> torch.Tensor:
    """J = I − 11ᵀ/n."""
    return torch.eye(n, dtype=dtype) - 1.0 / n


def _desc_svdvals(M: torch.Tensor) -> torch.Tensor:
    return torch.linalg.svdvals(M)


def log_inversion_spectrum(M: torch.Tensor, clip: float = DEFAULT_CLIP) -> torch.Tensor:
    """Spectrum of log(clip(M)) J after rescaling rows of M to sum 1 ([..., n, n] -> [..., n]).

    For M = softmax_row(βS): log M = βS − lse·1ᵀ and the row term dies under J, so the
    spectrum is that of βSJ.
    """
    rows = M.sum(-1, keepdim=True)
    M = M / torch.where(rows.abs() > 0, rows, torch.ones_like(rows))
    return _desc_svdvals(torch.log(M.clamp_min(clip)) @ centering(M.shape[-1], M.dtype))


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
    Rt = R.T.contiguous()
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


class StaticLeastSquares:
    """P_static's least squares with its X side factorised once: K(Y) = (Σ x xᵀ)⁻¹ Σ x yᵀ.

    x = vec(X_b) (row-major), X: [B, n, d] or [G, B, n, d]. Tasks that share their inputs (the
    rungs of one (r*, seed), and a task's noisy copies) reuse one factorisation. Needs B ≥ nd.
    """

    def __init__(self, X):
        X, _, self.single = _as_groups(X, X, "P_static")
        G, B, n, d = X.shape
        if B < n * d:
            raise ValueError(
                f"P_static: least squares over vec(X) needs at least n*d = {n * d} sequences, got {B}"
            )
        self.n, self.d = n, d
        self.x = X.reshape(G, B, n * d)
        self.chol, info = torch.linalg.cholesky_ex(self.x.transpose(1, 2) @ self.x)
        if bool((info != 0).any()):
            raise ValueError(
                "P_static: the inputs vec(X) are linearly dependent; supply more or "
                "more varied sequences"
            )
        self._pinv = None

    @property
    def dense(self) -> bool:
        return self.n * self.d <= STATIC_DENSE_MAX_ND

    def operator(self, Y, *, dense: bool | None = None) -> torch.Tensor:
        """K: [G, nd, nd] with vec(Y_b) ≈ K vec(X_b); Y: the shape of X."""
        _, Y, _ = _as_groups(Y, Y, "P_static")
        if Y.shape[:-2] != self.x.shape[:-1] or Y.shape[-2:] != (self.n, self.d):
            raise ValueError(
                f"P_static: Y must have the shape of X, [.., {self.x.shape[1]}, {self.n}, "
                f"{self.d}], got {tuple(Y.shape)}"
            )
        y = Y.reshape(self.x.shape)
        if self.dense if dense is None else dense:
            return torch.cholesky_solve(self.x.transpose(1, 2) @ y, self.chol).transpose(1, 2)
        if self._pinv is None:  # x⁺ = (xᵀx)⁻¹xᵀ once: then each Y costs one product
            self._pinv = torch.cholesky_solve(self.x.transpose(1, 2), self.chol)
        return (self._pinv @ y).transpose(1, 2)


def static_operator(
    X, Y, *, method: str = "auto", lstsq: StaticLeastSquares | None = None
) -> dict[str, np.ndarray]:
    """Least-squares static map and its Van Loan–Pitsianis rank-1 summary.

    Regress vec(Y) on vec(X) (row-major, K: [nd, nd] = M ⊗ Vᵀ for a static task), rearrange
    K into R: [n², d²] whose rank-1 part is vec(M) vec(Vᵀ)ᵀ, and return M̂ (its top left
    singular vector, sign fixed so that the entries sum positive) and the static-fit share
    s₁²/Σs² of R (1 for a static task). Needs B ≥ nd sequences per group.

    ``method``: ``dense`` (full eigendecomposition), ``iterative`` (:func:`top_singular_pair`,
    share = s₁² / ‖K‖_F²) or ``auto`` (dense up to n·d = STATIC_DENSE_MAX_ND). ``lstsq``: a
    factorisation of the same X to reuse.
    """
    if method not in ("auto", "dense", "iterative"):
        raise ValueError(f"P_static: method must be auto, dense or iterative, got {method!r}")
    lstsq = StaticLeastSquares(X) if lstsq is None else lstsq
    dense = lstsq.dense if method == "auto" else method == "dense"
    K = lstsq.operator(Y)
    return rearranged_summary(K, lstsq.n, lstsq.d, lstsq.single, dense=dense)


def rearranged_summary(
    K: torch.Tensor, n: int, d: int, single: bool = False, dense: bool = True
) -> dict:
    """Van Loan–Pitsianis summary of static maps K: [G, nd, nd]: ``M_hat`` [G, n, n] and the
    ``static_fit_share`` [G] (see :func:`static_operator`); ``single`` drops the group axis;
    ``dense``: full eigendecomposition, else the iterative top pair."""
    G = K.shape[0]
    R = K.reshape(G, n, d, n, d).permute(0, 1, 3, 2, 4).reshape(G, n * n, d * d)
    if dense:
        u, share = _top_pair_dense(R, n, d)
    else:
        u, share = _top_pair_iterative(R, K)
    M_hat = u.reshape(G, n, n)
    # SCIENCE.md fixes the sign so that M̂'s row sums are positive; for a rank-one summary
    # only a global sign is free, so we make the total (the sum of the row sums) positive
    sign = torch.sign(M_hat.sum((-1, -2)))
    M_hat = M_hat * torch.where(sign == 0, 1.0, sign)[:, None, None]
    return {"M_hat": _out(M_hat, single), "static_fit_share": _out(share, single)}


def _top_pair_dense(R: torch.Tensor, n: int, d: int) -> tuple[torch.Tensor, torch.Tensor]:
    """vec(M̂)·s₁ and the share from the smaller Gram matrix (n² × n² or d² × d²)."""
    if n <= d:
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
        total = Kg.pow(2).sum()
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
) -> dict:
    """P_static, the naive (value-free) Entropic Bound.

    Returns ``spectrum`` ([G, n]: svd(M̂) for linear classes, the log-inversion spectrum for
    softmax classes), ``static_fit_share`` ([G]) and ``M_hat`` ([G, n, n]). ``method`` and
    ``lstsq`` as for :func:`static_operator`.
    """
    out = static_operator(X, Y, method=method, lstsq=lstsq)
    M = torch.as_tensor(out["M_hat"])
    spec = log_inversion_spectrum(M, clip) if softmax else _desc_svdvals(M)
    out["spectrum"] = spec.numpy()
    return out


class SingularTokens(RuntimeError):
    """A sequence whose token matrix X̃ is rank-deficient; ``index``: its flat batch position."""

    def __init__(self, index: int):
        super().__init__(f"singular token matrix (sequence {index} of the batch)")
        self.index = index


def _pinv_tokens(Xt: torch.Tensor) -> torch.Tensor:
    """X̃⁺: [..., d, n] for X̃: [..., n, d] of full rank, by the normal equations."""
    n, d = Xt.shape[-2:]
    # Cholesky of the (SPD) Gram matrix: batched LU solves are ~30x slower on CPU
    gram = Xt.transpose(-1, -2) @ Xt if n >= d else Xt @ Xt.transpose(-1, -2)
    chol, info = torch.linalg.cholesky_ex(gram)
    bad = torch.nonzero(info.flatten()).flatten()
    if len(bad):
        raise SingularTokens(int(bad[0]))
    if n >= d:
        return torch.cholesky_solve(Xt.transpose(-1, -2), chol)
    return torch.cholesky_solve(Xt, chol).transpose(-1, -2)


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


def attention_native_gram(Z1: torch.Tensor, Z2: torch.Tensor) -> torch.Tensor:
    """Σ_b Z1_b Z2_bᵀ: [G, d, d] for Z1, Z2: [G, B, d, d]."""
    return torch.einsum("gbij,gbkj->gik", Z1, Z2)


def attention_native_spectrum(pinv: torch.Tensor, Y: torch.Tensor) -> torch.Tensor:
    """sqrt(eig(Σ_b Z_b Z_bᵀ)), Z_b = X̃_b⁺ Y_b; pinv: [G, B, d, n], Y: [G, B, n, d] -> [G, d]."""
    return attention_native_eig(attention_native_sum(pinv @ Y))


@dataclass
class AttnAccumulator:
    """P_attn (SCIENCE.md §3) streamed: C = Σ_b Z_b Z_bᵀ summed batch by batch in float64, and,
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
    """P_attn, the attention-native (value-free) predictor: ``spectrum`` [G, d].

    For linear attention and n ≥ d, Z_b = A (X_bᵀX_b/n) V so col(C) = col(A): exact whatever
    V is. Centring (n > d) removes softmax's uniform part, to first order in β. One batch of
    :class:`AttnAccumulator`, the streaming form ``entropic-bound predict`` uses.
    """
    X, Y, single = _as_groups(X, Y, "P_attn")
    acc = AttnAccumulator(X.shape[-2], X.shape[-1], X.shape[0])
    acc.add(X, Y)
    return {"spectrum": _out(acc.spectrum(), single)}


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
