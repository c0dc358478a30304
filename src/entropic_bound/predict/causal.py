"""P_attn under a causal (lower-triangular) mask (docs/method.md §3, "Causal attention").

Causal linear attention is Y_i = Σ_{j≤i} (x_iᵀ A x_j / n) x_jᵀ V, i.e. per row

    y_iᵀ = x_iᵀ A P_i W,   P_i = (1/n) Σ_{j≤i} x_j x_jᵀ  (the prefix second moment), W = V,

so each row has its own map A P_i W and the per-sequence least squares of P_attn (one map Z_b
for all rows) does not apply. The model is bilinear in (A, W), with P_i known from X: given A it
is a linear regression of y_i on u_i = P_i Aᵀ x_i (for W), given W one of y_i on x_i ⊗ P_i W
(for A, d² unknowns). Alternating the two (ALS) decreases the residual monotonically and, on
exact data, reaches zero residual at the one solution (A c, W / c); svd(Â) is then A's spectrum
up to scale, exact whatever V is. First order in β, causal softmax attention is the prefix mean
x̄_{≤i}ᵀ V plus x_iᵀ A Q_i W with Q_i = (β/√d)(1/i) Σ_{j≤i} (x_j − x̄_{≤i})(x_j − x̄_{≤i})ᵀ (the
prefix covariance): ``prefix="covariance"`` fits that form (with the prefix-mean term).

Works in float64 on X: [B, n, d], Y: [B, n, d_v].
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

#: ALS stops when the residual energy is below this share of the target energy (exact data),
#: or when a sweep lowers it by less than ALS_STALL of itself (the noise level is reached) ...
ALS_TOL = 1e-20
ALS_STALL = 1e-6
#: ... or after this many sweeps (each: two small least squares)
ALS_MAX_ITER = 400


@dataclass
class CausalFit:
    """The causal P_attn fit: ``spectrum`` [d] (svd of Â, descending), the residual energy
    and its degrees of freedom (σ̂² = resid / dof), the sweeps used and the rows fitted."""

    spectrum: torch.Tensor
    resid: float
    dof: int
    target: float
    sweeps: int
    rows: int
    converged: bool


def prefix_operators(X: torch.Tensor, prefix: str = "moment") -> tuple[torch.Tensor, torch.Tensor]:
    """P_i: [B, n, d, d] and the prefix means x̄_{≤i}: [B, n, d] of X: [B, n, d].

    ``moment``: P_i = (1/n) Σ_{j≤i} x_j x_jᵀ (linear attention); ``covariance``: the prefix
    covariance (1/i) Σ_{j≤i} (x_j − x̄_{≤i})(x_j − x̄_{≤i})ᵀ (softmax attention, first order)."""
    B, n, d = X.shape
    outer = X[..., :, None] * X[..., None, :]  # [B, n, d, d]
    cum = outer.cumsum(1)
    count = torch.arange(1, n + 1, dtype=X.dtype)[None, :, None]
    mean = X.cumsum(1) / count
    if prefix == "moment":
        return cum / n, mean
    if prefix != "covariance":
        raise ValueError(f"prefix must be moment or covariance, got {prefix!r}")
    cov = cum / count[..., None] - mean[..., :, None] * mean[..., None, :]
    return cov, mean


def _lstsq(F: torch.Tensor, T: torch.Tensor) -> torch.Tensor:
    """argmin ‖F Θ − T‖ by the normal equations (ridge 1e-12·tr for rank-deficient F)."""
    N = F.T @ F
    N = N + 1e-12 * torch.trace(N) / N.shape[0] * torch.eye(N.shape[0], dtype=N.dtype)
    return torch.linalg.solve(N, F.T @ T)


#: ALS starts: A = I, then seeded Gaussian draws (a bilinear least squares can stall at a
#: non-global stationary point from one start; the fit with the least residual is kept, and an
#: exact fit ends the search)
ALS_STARTS = 5


def fit_causal(
    X,
    Y,
    prefix: str = "moment",
    tol: float = ALS_TOL,
    max_iter: int = ALS_MAX_ITER,
    starts: int = ALS_STARTS,
) -> CausalFit:
    """The causal P_attn: Â by alternating least squares over every row of X: [B, n, d] and
    Y: [B, n, d_v] (see the module docstring), from ``starts`` starting points; needs B·n rows
    > d² + 2·d·d_v."""
    X = torch.as_tensor(X, dtype=torch.float64)
    Y = torch.as_tensor(Y, dtype=torch.float64)
    B, n, d = X.shape
    dv = Y.shape[-1]
    rows, unknowns = B * n, d * d + 2 * d * dv
    if rows <= unknowns:
        raise ValueError(
            f"causal P_attn fits {unknowns} unknowns (A, the value map and the prefix-mean term) "
            f"from B·n = {rows} rows; supply more sequences"
        )
    P, mean = prefix_operators(X, prefix)
    data = (X.reshape(-1, d), Y.reshape(-1, dv), P.reshape(-1, d, d), mean.reshape(-1, d))
    gen = torch.Generator().manual_seed(0)
    best = None
    for start in range(starts):
        A0 = torch.eye(d, dtype=torch.float64)
        if start:
            A0 = torch.randn(d, d, generator=gen, dtype=torch.float64)
        fit = _als(*data, A0, tol, max_iter)
        best = fit if best is None or fit.resid < best.resid else best
        if best.resid <= tol * best.target:
            break
    best.dof = rows * dv - unknowns
    return best


def _als(x, y, P, mean, A, tol: float, max_iter: int) -> CausalFit:
    """ALS sweeps from A (x: [rows, d], y: [rows, d_v], P: [rows, d, d], mean: [rows, d])."""
    rows, d = x.shape
    target = float((y * y).sum())
    xx = (x[:, :, None] * x[:, None, :]).reshape(rows, d * d)  # the A step's x side, once
    prev, sweeps, converged = float("inf"), 0, False
    for sweep in range(1, max_iter + 1):
        sweeps = sweep
        # W step: y_i = Wᵀ u_i + V0ᵀ x̄_i, u_i = P_i Aᵀ x_i
        u = (P @ (x @ A)[:, :, None])[..., 0]
        WV = _lstsq(torch.cat([u, mean], 1), y)
        W, V0 = WV[:d], WV[d:]
        # A step: t_i = y_i − V0ᵀ x̄_i = (P_i W)ᵀ Aᵀ x_i, linear in A (d² unknowns);
        # N[(a,b),(a',b')] = Σ_r x_a x_a' (Q Qᵀ)_bb': one GEMM over the rows, then reordered
        t = y - mean @ V0
        Q = P @ W  # [rows, d, dv]
        QQ = (Q @ Q.transpose(1, 2)).reshape(rows, d * d)
        N = (xx.T @ QQ).reshape(d, d, d, d).permute(0, 2, 1, 3).reshape(d * d, d * d)
        rhs = (x.T @ (Q @ t[:, :, None])[..., 0]).reshape(d * d)
        N = N + 1e-12 * torch.trace(N) / (d * d) * torch.eye(d * d, dtype=N.dtype)
        A = torch.linalg.solve(N, rhs).reshape(d, d)
        A = A / torch.linalg.matrix_norm(A).clamp_min(1e-300)  # the scale lives in W
        fit = ((x @ A)[:, None, :] @ Q)[:, 0] + mean @ V0
        resid = float(((y - fit) ** 2).sum())
        if resid <= tol * target or prev - resid <= ALS_STALL * resid:
            converged = True
            break
        prev = resid
    # W of the last A (the A step changed it): one more W step for the residual of the pair
    u = (P @ (x @ A)[:, :, None])[..., 0]
    F = torch.cat([u, mean], 1)
    resid = float(((y - F @ _lstsq(F, y)) ** 2).sum())
    return CausalFit(torch.linalg.svdvals(A), resid, 0, target, sweeps, rows, converged)
