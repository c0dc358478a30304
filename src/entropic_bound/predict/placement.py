"""Where a user's X, Y sit on the predictability frontier (docs/method.md §3, claim C9): n against d,
linear- or softmax-like mixing, a noise estimate; and whether P_static's kernel is a softmax.

Every function reads the sums of one pass (:class:`.predictors.AttnAccumulator`) and the
thresholds of :class:`.recommend.Thresholds` (``th``); none reads the data again.
"""

from __future__ import annotations

import math

import numpy as np
import torch


def mixing(acc, th) -> dict:
    """Linear-attention-like or softmax-like, from the mean-token index.

    Why this statistic: a softmax row is a convex combination of the same n value tokens, so the
    outputs of one sequence share a common component (the attention-weighted mean token) and the
    per-sequence mean output ȳ_b carries far more than the 1/n share of the energy that
    uncorrelated tokens give. Linear attention (and any token-wise map, and noise) leaves the
    tokens nearly uncorrelated. So index = n · (share of the energy in the mean tokens) =
    n² Σ‖ȳ_b − μ‖² / Σ‖Y_b − 1μᵀ‖² (μ: the global mean token, so that a constant output bias does
    not count) is ≈ 1 for linear attention, rising towards n for uniform attention. This beat the
    share of Y explained by a linear map of the token mean x̄_b, which peaked softmax (β ≥ 4)
    leaves near 1.5–2 because its mean output is not linear in x̄_b.
    """
    N, n = acc.seen, acc.n
    mu = acc.ybar / max(N, 1)
    num = acc.ybar2 - N * float(mu @ mu)
    den = acc.y2 - N * n * float(mu @ mu)
    out = {"label": "undetermined", "basis": "mean-token index", "mean_token_index": None}
    out["threshold"] = th.softmax_index
    if den <= 1e-12 * max(acc.y2, 1e-300):
        out["explanation"] = "Y does not vary within sequences, so the mixing cannot be seen"
        return out
    index = n * n * max(num, 0.0) / den
    out["label"] = "softmax-like" if index >= th.softmax_index else "linear-like"
    out["mean_token_index"] = index
    out["explanation"] = (
        "n·(energy share of the per-sequence mean target token): ≈ 1 when tokens are mixed "
        "linearly or not at all, ≫ 1 when every output averages the same tokens as softmax "
        f"does; softmax-like from {th.softmax_index}"
    )
    return out


def static_residual(X: np.ndarray, Y: np.ndarray) -> tuple[float, int]:
    """Residual energy and degrees of freedom of P_static's least squares vec(Y) ~ K vec(X)
    (the normal equations of :func:`.predictors.static_operator`)."""
    B, n, d = X.shape
    dv = Y.shape[-1]
    x = torch.from_numpy(X).reshape(B, n * d)
    y = torch.from_numpy(Y).reshape(B, n * dv)
    chol, info = torch.linalg.cholesky_ex(x.T @ x)
    if int(info) != 0:
        return 0.0, 0
    sxy = x.T @ y
    fit = float((sxy * torch.cholesky_solve(sxy, chol)).sum())
    return max(float((y * y).sum()) - fit, 0.0), n * dv * (B - n * d)


def noise(
    acc, attn_spec, attn_cut: int, trusted: str, softmax: bool, static_resid, causal=None
) -> dict:
    """σ̂, the per-entry noise level of Y under the trusted predictor's model, and how.

    * P_static trusted: the residual of its least squares over its nd(B − nd) degrees of freedom.
    * n ≥ d + 2, "residual": Y_b = X_b Z_b exactly for linear attention, so what a per-sequence
      linear map of [1, X_b] cannot fit is noise: σ̂² = Σ‖JY − JX Z‖² / (B d (n − d − 1)),
      unbiased for linear attention, an upper bound otherwise (it holds softmax's non-linear part).
    * n ≤ d + 1, "spectral floor": no residual is left, but noise adds σ² d Σ_b (X̃_bᵀX̃_b)⁻¹ to C,
      about σ² T per direction (T = Σ_b tr((X̃_bᵀX̃_b)⁻¹), computed from X); so
      σ̂² = (Σ_{k>r} λ_k) / ((d − r) T), a rough estimate that takes the spectrum beyond the cut r
      for noise.
    * causal (``causal``: the :class:`.causal.CausalFit` of P_attn under the mask): the residual
      of its per-row fit over its rows·d_v − (d² + 2·d·d_v) degrees of freedom (exact for causal
      linear attention; an upper bound otherwise).
    With d_v ≠ d, Y has d_v columns: C's noise is σ² d_v Σ_b (X̃_bᵀX̃_b)⁻¹.
    The relative level is σ̂ over the rms of the clean signal, the σ of docs/method.md at gain 1;
    ``share_of_attn_energy`` is the noise's expected share of the P_attn spectrum's energy, which
    decides whether an energy rank counts noise directions.
    """
    N, n, d = acc.seen, acc.n, acc.d
    dv = acc.ybar.shape[-1] if acc.ybar is not None else d
    power = acc.y2 / (N * n * dv)
    out = {"sigma_hat": None, "relative": None, "method": None, "target_power": power}
    out["method"], var = _noise_variance(
        acc, attn_spec, attn_cut, trusted, softmax, static_resid, causal, dv
    )
    if var is None:
        return out
    var = max(var, 0.0)
    out["sigma_hat"] = math.sqrt(var)
    clean = power - var
    out["relative"] = math.sqrt(var / clean) if clean > 0 else None
    total = float(np.sum(attn_spec**2))
    if trusted != "P_static" and causal is None and acc.traced and total > 0:
        # the noise's expected energy in C, σ̂² d_v T, as a share of C's: what the energy rank must
        # leave out for the cut to land on the signal (heavy-tailed in T at n = d)
        out["share_of_attn_energy"] = min(1.0, var * dv * (acc.trace * N / acc.traced) / total)
    return out


def _noise_variance(
    acc, attn_spec, attn_cut, trusted, softmax, static_resid, causal, dv
) -> tuple[str, float | None]:
    """(how, σ̂²) by the first estimate that applies, in the order of :func:`noise`'s list."""
    N, n, d = acc.seen, acc.n, acc.d
    if causal is not None:
        how = "residual of the causal per-row fit (exact for causal linear attention" + (
            "; an upper bound here: it also holds what the first-order form cannot fit)"
            if softmax
            else ")"
        )
        return how, causal.resid / causal.dof if causal.dof > 0 else 0.0
    if trusted == "P_static" and static_resid and static_resid[1] > 0:
        return "residual of P_static's least squares", static_resid[0] / static_resid[1]
    if n >= d + 2:
        how = "residual of the per-sequence fit of Y on [1, X] (" + (
            "an upper bound: it also holds what linear attention cannot fit of softmax)"
            if softmax
            else "exact for linear attention)"
        )
        return how, acc.resid / (N * dv * (n - d - 1))
    if attn_cut < d and acc.traced:
        T = acc.trace * N / acc.traced
        tail = float(np.sum(attn_spec[attn_cut:] ** 2))
        return (
            "spectral floor of P_attn beyond the cut (rough: n <= d + 1 leaves no residual)",
            tail / ((d - attn_cut) * T) * (d / dv) if T > 0 else 0.0,
        )
    return (
        "not estimable: n <= d + 1 leaves no per-sequence residual and the P_attn cut keeps "
        "every direction",
        None,
    )


def regime(n: int, d: int, th) -> str:
    """Which predictors the paper's frontier makes exact at this n against d."""
    if n < d:
        return (
            f"n = {n} < d = {d}: P_attn is not exact (each sequence shows the kernel only through "
            "X's n-dimensional row space); softmax data with a known identity value map: P_invert"
        )
    if n == d:
        return (
            f"n = d = {n}: P_attn is exact for linear attention at zero noise; softmax-like data "
            "need n > d for its centring; noise is amplified (E[(XᵀX)⁻¹] diverges at n = d)"
        )
    if n < 2 * d:
        return (
            f"d < n = {n} < 2d = {2 * d}: P_attn (centred) is exact for linear attention at zero "
            "noise and first-order for softmax; noise raises its floor below n = 2d"
        )
    return (
        f"n = {n} >= 2d = {2 * d} (at scale): P_attn is exact for linear attention and stays so "
        f"up to noise ≈ {th.noise_at_scale} of the signal (claim C9); first-order for softmax"
    )


def softmax_kernel(M: np.ndarray, th) -> bool:
    """Whether P_static's M̂ looks like a row-softmax: (almost) all entries positive and equal row
    sums (M̂ is known up to scale). A linear kernel U diag(s) Wᵀ has mixed signs and unequal sums;
    the token-mixing diagnostic cannot decide here, as a static linear M may mix tokens unevenly."""
    rows = M.sum(-1)
    mean = float(np.mean(rows))
    return bool(
        mean > 0
        and np.mean(M > 0) >= th.softmax_positive
        and np.std(rows) <= th.softmax_row_spread * mean
    )
