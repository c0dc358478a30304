"""P_attn under a causal (lower-triangular) mask (docs/method.md §3, "Causal attention").

Causal linear attention is Y_i = Σ_{j≤i} (x_iᵀ A x_j / n) x_jᵀ V, i.e. per row

    y_iᵀ = x_iᵀ A P_i W,   P_i = (1/n) Σ_{j≤i} x_j x_jᵀ  (the prefix second moment), W = V,

so each row has its own map A P_i W and the per-sequence least squares of P_attn (one map Z_b
for all rows) does not apply. The model is bilinear in (A, W), with P_i known from X; given A it
is a linear least squares in W (and the prefix-mean term). First order in β, causal softmax
attention is the prefix mean x̄_{≤i}ᵀ V plus x_iᵀ A Q_i W with Q_i = (β/√d)(1/i) Σ_{j≤i}
(x_j − x̄_{≤i})(x_j − x̄_{≤i})ᵀ (the prefix covariance): ``prefix="covariance"`` fits that form
(with the prefix-mean term).

The fit is by **variable projection**: W and the prefix-mean term are eliminated by their least
squares, and the residual left, a function of A alone, is minimised by L-BFGS (strong Wolfe line
search) with its exact gradient. It runs in whitened coordinates, one per side of A: the query
side x_i by the tokens' second moment M = E[x xᵀ], the key side (where Q_i acts) by the metric
of the prefix: the covariance C for softmax (Q_i is centred), M for linear attention. Each
whitening keeps only the directions the tokens vary in (eigenvalues above ``NULL_RCOND`` of the
largest): a LayerNorm's output x = γ ⊙ z + b has xᵀ(1/γ) the same for every token, so every Q_i
sends 1/γ to zero and A + a·(1/γ)ᵀ fits exactly as A does; fitted in all d coordinates, that
flat part is never moved by the gradient and the map back to x's coordinates inflates it into
the top singular value. In the reduced coordinates the fitted Ã is M^½ A C^½ (up to rotations),
so its singular values are the kernel in the data's own scale, the logit field's energy
E[(x_iᵀ A (x_j − x̄))²] = ‖M^½ A C^½‖²_F split by direction, with nothing reported where the data
cannot see. The bilinear problem has non-global stationary points, so the fit starts from Ã = I
and seeded Gaussian draws and keeps the least residual; on exact data it reaches zero residual at
the solution (Ã c, W / c): svd(Ã) is the data-scale kernel's spectrum up to scale, whatever V is.
P_i is never formed: P_i v_i for every row is two masked products per sequence, as in attention
itself.

Works in float64 on X: [B, n, d], Y: [B, n, d_v].
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from entropic_bound.core.causal import rows_needed
from entropic_bound.predict.datascale import NULL_RCOND, whitening

#: the fit stops when the residual energy is below this share of the target energy (exact data),
#: or when FIT_CHUNK iterations lower it by less than FIT_STALL of itself (the noise level) ...
FIT_TOL = 1e-20
FIT_STALL = 1e-7
FIT_CHUNK = 20
#: ... or after this many L-BFGS iterations from one start (each: a few products over the rows)
FIT_MAX_ITER = 2000
#: starts: Ã = I, then seeded Gaussian draws (the least residual is kept; an exact fit ends the
#: search, and so does the least residual reached a second time, within FIT_AGREE of itself:
#: the best basin found twice)
FIT_STARTS = 5
FIT_AGREE = 1e-5
#: L-BFGS's memory (pairs of steps and gradient changes)
FIT_HISTORY = 30


@dataclass
class CausalFit:
    """The causal P_attn fit: ``spectrum`` [d] (svd of M^½ Â C^½, descending, zeros where the
    data do not vary), the residual energy and its degrees of freedom (σ̂² = resid / dof), the
    iterations used (of the kept start) and the rows fitted; ``converged``: it stopped at an
    exact fit or a stall, not at the cap; ``kernel``: Â in the tokens' coordinates (no part
    along the dropped directions); ``dropped``: the directions left out on the query and the
    key side; ``starts``: (residual, spectrum) of every start tried, in order: starts that
    reach the same residual from different points and read different spectra say the data do
    not pin the kernel down; ``curve``: the residual with Ã cut to each rank
    (:func:`truncation_residuals`); ``kernel_scaled``: Ã, the kernel in the data's scale, with
    ``left``, ``right`` the whitenings T_L, T_R (``kernel`` = T_L Ã T_Rᵀ)."""

    spectrum: torch.Tensor
    resid: float
    dof: int
    target: float
    iterations: int
    rows: int
    converged: bool
    kernel: torch.Tensor | None = None
    dropped: tuple[int, int] = (0, 0)
    starts: tuple = ()
    curve: torch.Tensor | None = None
    kernel_scaled: torch.Tensor | None = None
    left: torch.Tensor | None = None
    right: torch.Tensor | None = None


def prefix_apply(X: torch.Tensor, prefix: str = "moment"):
    """``(apply, mean)`` for X: [B, n, d]: ``apply(V)`` is P_i v_i for every row (V: [B, n, d]),
    ``mean`` the prefix means x̄_{≤i}: [B, n, d].

    ``moment``: P_i = (1/n) Σ_{j≤i} x_j x_jᵀ (linear attention); ``covariance``: the prefix
    covariance (1/i) Σ_{j≤i} (x_j − x̄_{≤i})(x_j − x̄_{≤i})ᵀ = (1/i) Σ_{j≤i} x_j x_jᵀ − x̄ x̄ᵀ
    (softmax attention, first order). Each P_i is symmetric, so ``apply`` is its own adjoint."""
    if prefix not in ("moment", "covariance"):
        raise ValueError(f"prefix must be moment or covariance, got {prefix!r}")
    B, n, d = X.shape
    count = torch.arange(1, n + 1, dtype=X.dtype)
    mean = X.cumsum(1) / count[None, :, None]
    # the mask and the row scale in one n × n factor: row i keeps j ≤ i, divided by i (or n)
    weight = torch.tril(torch.ones(n, n, dtype=X.dtype))
    weight = weight / (count[:, None] if prefix == "covariance" else float(n))
    Xt = X.transpose(1, 2)

    def apply(V: torch.Tensor) -> torch.Tensor:
        u = (V @ Xt).mul_(weight) @ X
        if prefix == "covariance":
            u.sub_(mean * torch.linalg.vecdot(mean, V)[..., None])
        return u

    return apply, mean


def fit_causal(
    X,
    Y,
    prefix: str = "moment",
    tol: float = FIT_TOL,
    max_iter: int = FIT_MAX_ITER,
    starts: int = FIT_STARTS,
    rcond: float = NULL_RCOND,
    init: torch.Tensor | None = None,
) -> CausalFit:
    """The causal P_attn: Â by variable projection over every row of X: [B, n, d] and
    Y: [B, n, d_v] (see the module docstring), from ``starts`` starting points; needs
    :func:`rows_needed` rows. ``init``: a kernel in the tokens' coordinates (an earlier fit's
    ``kernel``) to start from instead of Ã = I: read in this fit's coordinates, then the draws."""
    X = torch.as_tensor(X, dtype=torch.float64)
    Y = torch.as_tensor(Y, dtype=torch.float64)
    B, n, d = X.shape
    dv = Y.shape[-1]
    rows, unknowns = B * n, d * d + 2 * d * dv
    if rows < rows_needed(d, dv):
        raise ValueError(
            f"causal P_attn fits {unknowns} unknowns (A, the value map and the prefix-mean term) "
            f"from B·n = {rows} rows of {dv} values; it needs at least {rows_needed(d, dv)} "
            "rows; supply more sequences"
        )
    problem, left, right = _setup(X, Y, prefix, rcond)
    kl, kr = left.shape[1], right.shape[1]
    gen = torch.Generator().manual_seed(0)
    best, seen = None, []
    for start in range(starts):
        A0 = torch.eye(kl, kr, dtype=torch.float64)
        if not start and init is not None:  # A = T_L Ã T_Rᵀ, so Ã = T_L⁺ A T_R⁺ᵀ
            A0 = torch.linalg.pinv(left) @ init.double() @ torch.linalg.pinv(right).T
        elif start:
            A0 = torch.randn(kl, kr, generator=gen, dtype=torch.float64)
        fit = _lbfgs(problem, A0, tol, max_iter)
        best = fit if best is None or fit[1] < best[1] else best
        seen.append((fit[1], _padded(torch.linalg.svdvals(fit[0]), d)))
        twice = sum(r <= best[1] * (1 + FIT_AGREE) for r, _ in seen) >= 2
        if best[1] <= tol * problem.target or twice:
            break
    Aw, resid, iterations, converged = best
    curve = truncation_residuals(problem, Aw)
    # Ã = M^½ A C^½ up to rotations on either side, so svd(Ã) is the kernel in the data's own
    # scale; A = T_L Ã T_Rᵀ is the kernel in the tokens' coordinates, with no part along the
    # directions the data never vary in (they are not identifiable, so none is reported)
    return CausalFit(
        _padded(torch.linalg.svdvals(Aw), d),
        resid,
        rows * dv - unknowns,
        problem.target,
        iterations,
        rows,
        converged,
        left @ Aw @ right.T,
        (d - kl, d - kr),
        tuple(seen),
        curve,
        Aw,
        left,
        right,
    )


def _setup(X: torch.Tensor, Y: torch.Tensor, prefix: str, rcond: float):
    """(problem, T_L, T_R): the projected residual in the whitened coordinates of X's two sides
    (module docstring)."""
    B, n, d = X.shape
    flat = X.reshape(B * n, d)
    moment = flat.T @ flat / (B * n)
    left = whitening(moment, rcond)
    if prefix == "covariance":
        mu = flat.mean(0)
        right = whitening(moment - torch.outer(mu, mu), rcond)
    else:
        right = left
    if right.shape[1] == 0:
        raise ValueError("the tokens do not vary: every x is the same vector, nothing to fit")
    return _Problem(X @ left, X @ right, Y.reshape(B * n, -1), prefix), left, right


def held_out_truncation(fit: CausalFit, X, Y, prefix: str, rcond: float = NULL_RCOND):
    """The residual share on other windows X, Y (not the fit's) of ``fit``'s kernel cut to each
    rank r = 0 … d in its own data's scale (the value map and the prefix-mean term solved on
    X, Y): [d + 1]. Directions that fitted the fit's own noise do not lower it."""
    X = torch.as_tensor(X, dtype=torch.float64)
    Y = torch.as_tensor(Y, dtype=torch.float64)
    problem, left, right = _setup(X, Y, prefix, rcond)
    u, s, vh = torch.linalg.svd(fit.kernel_scaled, full_matrices=False)
    to_here = (torch.linalg.pinv(left) @ fit.left, fit.right.T @ torch.linalg.pinv(right).T)
    out = torch.empty(len(s) + 1, dtype=torch.float64)
    for r in range(len(s) + 1):
        Ar = to_here[0] @ ((u[:, :r] * s[:r]) @ vh[:r]) @ to_here[1]
        out[r] = problem.value_grad(Ar, grad=False)[0] / problem.target
    return out


def truncation_residuals(problem: _Problem, Aw: torch.Tensor) -> torch.Tensor:
    """The fit's residual with Ã cut to rank r (its SVD's first r terms; the value map and the
    prefix-mean term solved again) for r = 0 … rank(Ã): [k + 1]. Ã is the kernel in the data's
    scale, so its SVD cut is the best rank-r kernel in the inputs' metric, and the curve is the
    knee's own question asked of the fitted head: the least r whose residual is within a share
    of the ablation's (r = 0: attention by the prefix mean alone) of the full fit's."""
    u, s, vh = torch.linalg.svd(Aw, full_matrices=False)
    out = torch.empty(len(s) + 1, dtype=torch.float64)
    for r in range(len(s) + 1):
        Ar = (u[:, :r] * s[:r]) @ vh[:r]
        out[r] = problem.value_grad(Ar, grad=False)[0]
    return out


def fit_knee(curve, fraction: float = 0.01) -> int:
    """The least r with residual(r) − best ≤ ``fraction`` × (residual(0) − best) on a
    residual-by-rank curve (:func:`truncation_residuals`, :func:`held_out_truncation`), best its
    least value (the full rank's in-sample; held out, where the noise directions stop helping);
    0 when cutting every direction costs nothing."""
    curve = torch.as_tensor(curve, dtype=torch.float64)
    best = float(curve.min())
    gap = float(curve[0]) - best
    if gap <= 0:
        return 0
    return int(torch.nonzero(curve - best <= fraction * gap)[0])


def _padded(sv: torch.Tensor, d: int) -> torch.Tensor:
    """Singular values padded with zeros to d (the directions the data do not vary in)."""
    spectrum = torch.zeros(d, dtype=torch.float64)
    spectrum[: len(sv)] = sv
    return spectrum


def _ridged(M: torch.Tensor) -> torch.Tensor:
    """M + 1e-12·tr(M)/k·I: a Gram matrix made safely positive definite."""
    k = M.shape[0]
    return M + 1e-12 * torch.trace(M) / k * torch.eye(k, dtype=M.dtype)


class _Problem:
    """The projected residual of Ã and its gradient: ``XL`` [B, n, k_L] the tokens whitened by
    their second moment (the query side), ``XR`` [B, n, k_R] by the prefix's own metric (the key
    side: the covariance for softmax, the second moment for linear attention), y: [rows, d_v].
    The prefix-mean term reads the query side's coordinates, which keep the mean."""

    def __init__(self, XL: torch.Tensor, XR: torch.Tensor, y: torch.Tensor, prefix: str):
        self.X, self.y = XL, y
        self.apply = prefix_apply(XR, prefix)[0]
        count = torch.arange(1, XL.shape[1] + 1, dtype=XL.dtype)
        self.mean = (XL.cumsum(1) / count[None, :, None]).reshape(y.shape[0], -1)
        self.mm, self.my = self.mean.T @ self.mean, self.mean.T @ y  # the constant blocks
        self.target = float((y * y).sum())

    def value_grad(self, A: torch.Tensor, grad: bool = True):
        """‖y − F θ̂‖² with F = [P_i Aᵀ x_i, x̄_i] and θ̂ its least squares, and the gradient in A
        (at θ̂ the gradient of the projected residual is the partial one: θ̂ is stationary), or
        None when ``grad`` is False."""
        B, n, _ = self.X.shape
        d = A.shape[1]
        u = self.apply(self.X @ A).reshape(-1, d)
        um = u.T @ self.mean
        N = torch.cat([torch.cat([u.T @ u, um], 1), torch.cat([um.T, self.mm], 1)], 0)
        theta = torch.linalg.solve(_ridged(N), torch.cat([u.T @ self.y, self.my], 0))
        r = self.y - u @ theta[:d] - self.mean @ theta[d:]
        if not grad:
            return (r * r).sum(), None
        # f = Σ‖r‖², u_i = P_i Aᵀ x_i: ∂f/∂u = −2 r Wᵀ, ∂f/∂(Aᵀx_i) = P_i ∂f/∂u_i, ∂f/∂A = Xᵀ ·
        gu = (-2.0 * r @ theta[:d].T).reshape(B, n, d)
        grad = self.X.reshape(B * n, -1).T @ self.apply(gu).reshape(-1, d)
        return (r * r).sum(), grad


def _lbfgs(problem: _Problem, A0: torch.Tensor, tol: float, max_iter: int):
    """L-BFGS on the projected residual from A0: ``(A, resid, iterations, converged)``."""
    A = A0.clone().requires_grad_(True)
    scale = 1.0 / max(problem.target, 1e-300)  # the objective is the residual's share
    opt = torch.optim.LBFGS(
        [A],
        lr=1.0,
        max_iter=FIT_CHUNK,
        max_eval=FIT_CHUNK * 5 // 4,
        history_size=FIT_HISTORY,
        tolerance_grad=0.0,
        tolerance_change=0.0,
        line_search_fn="strong_wolfe",
    )

    def closure():
        value, grad = problem.value_grad(A.detach())
        A.grad = grad * scale
        return value * scale

    prev, done, converged = float("inf"), 0, False
    while done < max_iter:
        opt.step(closure)
        state = opt.state[A]
        moved = state["n_iter"] - done
        done = state["n_iter"]
        value = float(problem.value_grad(A.detach(), grad=False)[0]) * scale
        if value <= tol or prev - value <= FIT_STALL * value or moved < FIT_CHUNK:
            converged = True
            break
        prev = value
    return A.detach(), value / scale, done, converged
