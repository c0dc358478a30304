"""The predictability frontier: data-only predictors over a grid, no training (docs/method.md §5).

Cells share what they can so that the grid costs seconds: the inputs X depend on
(n, seed), the kernel A on (r*, seed), the value map and noise on the seed, so cells that
differ in σ, β or the value map differ in nothing else; each predictor's per-sequence
inverse (X̃⁺, P_invert's normal matrix) and P_static's least-squares operator are made once per
(n, seed).

Both least-squares predictors are linear in Y = Y₀ + σE before their spectra are taken.
P_static's map K(σ) = (xᵀx)⁻¹xᵀ(y₀ + σe) = K(Y₀) + σK(E), with K(E) once per (n, seed): one
product per cell, not a solve per σ. ``p_attn_sigma: linear`` (the paper and large configs) also
shares P_attn's noise: Z_b = X̃_b⁺(Y_b + σE_b) = X̃_b⁺Y_b + σ X̃_b⁺E_b, so C(σ) = Σ_b Z_b Z_bᵀ =
G_YY + σ(G_YE + G_YEᵀ) + σ² G_EE with G_EE once per (n, seed). Both equal forming every copy
(``formed``: P_attn on the copies) up to float64 rounding: the same integer ranks, float
estimators within ~1e-8 relative (docs/method.md, "The frontier grid"). P_invert forms the copies.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from entropic_bound.core.estimators import estimates_long
from entropic_bound.core.progress import report
from entropic_bound.core.seeds import FRONTIER_INPUTS, FRONTIER_KERNEL, frontier_stream
from entropic_bound.core.tables import FRONTIER_COLUMNS, FRONTIER_OPT_IN
from entropic_bound.predict.attention import (
    attention_native_eig,
    attention_native_gram,
    attention_native_pinv,
    attention_native_spectrum,
)
from entropic_bound.predict.base import DEFAULT_CLIP, log_inversion_spectrum
from entropic_bound.predict.inversion import (
    inversion_normal_matrix,
    inversion_spectrum,
    token_pinv_exact,
)
from entropic_bound.predict.static import StaticLeastSquares, rearranged_summary
from entropic_bound.tasks.make import haar_orthonormal, teacher_kernel
from entropic_bound.tasks.mixing import operator_terms

COLUMNS = list(FRONTIER_COLUMNS)
#: every data-only predictor of the frontier, in table order
PREDICTORS = ("P_attn", "P_static", "P_invert")  # the frontier table: the columns analyses read
P_ATTN_SIGMA = ("formed", "linear")  # frontier.p_attn_sigma (module docstring)


def frontier_inputs(
    base_seed: int, n: int, seed: int, n_seqs: int, d: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The inputs of a frontier cell (n, seed): X, E: [1, n_seqs, n, d] (tokens and unit
    noise) and the Haar value map V: [d, d], float64. Every σ, β, r*, class and value map of
    the cell shares them."""
    g = frontier_stream(base_seed, FRONTIER_INPUTS, n, seed)
    X = torch.randn(1, n_seqs, n, d, generator=g, dtype=torch.float64)
    E = torch.randn(1, n_seqs, n, d, generator=g, dtype=torch.float64)
    return X, E, haar_orthonormal(d, d, g)


def frontier_kernel(fcfg: dict, base_seed: int, r_star: int, seed: int) -> torch.Tensor:
    """The teacher kernel A: [d, d] of rank r* of a frontier cell (shared by every n)."""
    d = fcfg["d"]
    A, _ = teacher_kernel(
        d,
        r_star,
        fcfg["kappa"],
        fcfg["gain"] * math.sqrt(d),
        frontier_stream(base_seed, FRONTIER_KERNEL, r_star, seed),
    )
    return A


def qk_logits(cls: str, XAX: torch.Tensor, n: int, d: int, beta: float | None):
    """(c · XAXᵀ, softmax?) of a query-key class, by ``mixing.operator_terms`` (one case table
    for teacher, student and frontier). Both terms are linear in the kernel and L3/L4 have no
    bias, so the class's scale c and activation are read off the unit kernel and applied to a
    shared XAXᵀ: [..., n, n] (β, σ and value maps reuse one XAXᵀ)."""
    unit = torch.ones((), dtype=XAX.dtype)
    coef, bias, softmax = operator_terms(cls, unit, n=n, d=d, beta=1.0 if beta is None else beta)
    if bias is not None or cls not in ("L3", "L4"):
        raise ValueError(f"the frontier covers the query-key classes L3, L4, not {cls}")
    return coef * XAX, softmax


def qk_operator(cls: str, XAX: torch.Tensor, n: int, d: int, beta: float | None) -> torch.Tensor:
    """M(X) = act(c · XAXᵀ): [..., n, n] of a query-key class (see :func:`qk_logits`)."""
    Z, softmax = qk_logits(cls, XAX, n, d, beta)
    return torch.softmax(Z, -1) if softmax else Z


@dataclass
class _SeedBlock:
    """What every cell of one (n, seed) shares: the inputs X, E: [1, B, n, d] and Haar V: [d, d]
    (:func:`frontier_inputs`), P_attn's X̃⁺: [1, B, d, n], the buffer of the S noisy copies
    ``Ys``: [S, B, n, d] (refilled per cell), and each predictor's factorisation where it
    applies (None where not): ``ZE`` = X̃⁺E and ``G_EE`` (``p_attn_sigma: linear``);
    ``lsq_static``, P_static's least squares factorised once (:class:`StaticLeastSquares`, whose
    factored route forms (xᵀx)⁻¹xᵀ), and ``KE_static`` = K(E): [1, n·d, n·d] (B ≥ n·d);
    P_invert's normal matrix's Cholesky factor and the per-sequence X⁺ of the S copies (n ≤ d,
    B·n(n−1) ≥ d²)."""

    n: int
    seed: int
    X: torch.Tensor
    E: torch.Tensor
    V_haar: torch.Tensor
    pinv: torch.Tensor
    Ys: torch.Tensor
    ZE: torch.Tensor | None = None
    G_EE: torch.Tensor | None = None
    lsq_static: StaticLeastSquares | None = None
    KE_static: torch.Tensor | None = None
    chol_inv: torch.Tensor | None = None
    X_inv: torch.Tensor | None = None


def _seed_block(
    fcfg: dict, base_seed: int, n: int, seed: int, linear: bool, predictors=PREDICTORS
) -> _SeedBlock:
    """The inputs of (n, seed) and every factorisation its cells share, formed once (only for
    the ``predictors`` asked for: the others are skipped, not only left out)."""
    d, B, S = fcfg["d"], fcfg["n_seqs"], len(fcfg["sigma"])
    X, E, V_haar = frontier_inputs(base_seed, n, seed, B, d)
    Ys = torch.empty(S, B, n, d, dtype=torch.float64)  # the noisy copies, refilled per cell
    block = _SeedBlock(n, seed, X, E, V_haar, attention_native_pinv(X), Ys)
    if linear:  # X̃⁺E and G_EE, shared by every cell of (n, seed)
        block.ZE = block.pinv @ E
        block.G_EE = attention_native_gram(block.ZE, block.ZE)
    if B >= n * d and "P_static" in predictors:  # P_static: (xᵀx)⁻¹xᵀ once, and its noise term
        block.lsq_static = StaticLeastSquares(X)
        block.KE_static = block.lsq_static.operator(E, dense=False)
    # P_invert (the X⁺ of the S noisy copies)
    if n <= d and B * n * (n - 1) >= d * d and "P_invert" in predictors:
        block.chol_inv = torch.linalg.cholesky(inversion_normal_matrix(X))
        block.X_inv = token_pinv_exact(X.expand(S, -1, -1, -1))
    return block


@dataclass
class _Cell:
    """One frontier cell of a :class:`_SeedBlock` at every σ: its coordinates and its clean
    output ``clean = act(c·XAXᵀ) X V``: [1, B, n, d]."""

    cls: str
    beta: float | None
    value_map: str
    r_star: int
    clean: torch.Tensor

    def keys(self, fcfg: dict, block: _SeedBlock) -> list[dict]:
        """The table keys of the cell, one per σ (the predictor is added per spectrum)."""
        return [
            {
                "class": self.cls,
                "value_map": self.value_map,
                "n": block.n,
                "d": fcfg["d"],
                "sigma": s,
                "beta": self.beta if self.beta is not None else np.nan,
                "r_star": self.r_star,
                "seed": block.seed,
            }
            for s in fcfg["sigma"]
        ]


def _frontier_cells(fcfg: dict, base_seed: int, block: _SeedBlock, r_star: int) -> Iterator[_Cell]:
    """The cells of (n, seed, r*): every class, β (L4 only) and value map, sharing one XAXᵀ."""
    d = fcfg["d"]
    A = frontier_kernel(fcfg, base_seed, r_star, block.seed)
    XAX = block.X @ A @ block.X.transpose(-1, -2)
    for cls in fcfg["classes"]:
        for beta in fcfg["beta"] if cls == "L4" else [None]:
            MX = qk_operator(cls, XAX, block.n, d, beta) @ block.X
            for value_map in fcfg["value_maps"]:
                V = block.V_haar if value_map == "unknown" else torch.eye(d, dtype=torch.float64)
                yield _Cell(cls, beta, value_map, r_star, MX @ V)


def _attn_spectra(block: _SeedBlock, cell: _Cell, sigmas: torch.Tensor) -> torch.Tensor:
    """P_attn at every σ: [S, d], from the shared Gram matrices (linear) or the noisy copies."""
    if block.G_EE is not None:
        Zc = block.pinv @ cell.clean
        G_YE = attention_native_gram(Zc, block.ZE)
        C = attention_native_gram(Zc, Zc) + sigmas * (G_YE + G_YE.transpose(-1, -2))
        return attention_native_eig(C + sigmas**2 * block.G_EE)
    S = block.Ys.shape[0]
    return attention_native_spectrum(block.pinv.expand(S, -1, -1, -1), block.Ys)


def _static_spectra(
    block: _SeedBlock, cell: _Cell, sigmas: torch.Tensor, clip: float
) -> torch.Tensor:
    """P_static at every σ: [S, n], from K(σ) = K(Y₀) + σK(E) (the module docstring)."""
    n, d = block.X.shape[-2:]
    K = block.lsq_static.operator(cell.clean, dense=False) + sigmas * block.KE_static
    M_hat = torch.as_tensor(rearranged_summary(K, n, d)["M_hat"])
    return log_inversion_spectrum(M_hat, clip) if cell.cls == "L4" else torch.linalg.svdvals(M_hat)


def _cell_spectra(
    fcfg: dict, block: _SeedBlock, cell: _Cell, sigmas: torch.Tensor, clip: float
) -> Iterator[tuple[str, torch.Tensor]]:
    """(predictor, spectra [S, k]) of every predictor that applies to ``cell``, in table order."""
    inverted = block.chol_inv is not None and cell.cls == "L4" and cell.value_map == "known"
    if block.G_EE is None or inverted:
        for i, s in enumerate(fcfg["sigma"]):  # Ys[i] = clean + s·E, in place
            torch.mul(block.E, s, out=block.Ys[i : i + 1]).add_(cell.clean)
    yield "P_attn", _attn_spectra(block, cell, sigmas)
    if block.lsq_static is not None:
        yield "P_static", _static_spectra(block, cell, sigmas, clip)
    if inverted:
        S = block.Ys.shape[0]
        X = block.X.expand(S, -1, -1, -1)
        yield (
            "P_invert",
            inversion_spectrum(X, block.Ys, None, block.chol_inv, clip, Xp=block.X_inv),
        )


def frontier_grid(
    fcfg: dict,
    base_seed: int = 0,
    taus=(0.9, 0.95, 0.99),
    tol: float = 1e-3,
    clip: float = DEFAULT_CLIP,
    progress=None,
) -> pd.DataFrame:
    """Long table of r_hat for every cell × applicable predictor × estimator; ``progress(done,
    total)`` after each (n, seed, r*) block (see progress.py)."""
    rows: list[dict] = []
    spectra: list[np.ndarray] = []
    for keys, spec in frontier_spectra(fcfg, base_seed, clip, progress):
        rows.extend(keys)
        spectra.append(spec)
    # spectra differ in length (n for P_static, d otherwise): estimates_long pads them
    keys = pd.DataFrame(rows)
    return estimates_long(keys, spectra, taus=taus, tol=tol, extra=FRONTIER_OPT_IN)[COLUMNS]


def frontier_spectra(
    fcfg: dict,
    base_seed: int = 0,
    clip: float = DEFAULT_CLIP,
    progress=None,
    predictors=PREDICTORS,
) -> Iterator[tuple[list[dict], np.ndarray]]:
    """Yield (keys, spectra) of every cell × applicable predictor: keys a list of S row dicts
    (one per σ of the cell, with ``predictor``), spectra [S, k] (k = d, or n for P_static).
    ``predictors``: the ones to compute (the others are skipped, not only left out)."""
    linear = fcfg.get("p_attn_sigma", "formed") == "linear"
    sigmas = torch.tensor(fcfg["sigma"], dtype=torch.float64)[:, None, None]
    total = len(fcfg["n"]) * len(fcfg["seeds"]) * len(fcfg["r_star"])
    done = 0
    for n, seed in itertools.product(fcfg["n"], fcfg["seeds"]):
        block = _seed_block(fcfg, base_seed, n, seed, linear, predictors)
        for r_star in fcfg["r_star"]:
            for cell in _frontier_cells(fcfg, base_seed, block, r_star):
                keys = cell.keys(fcfg, block)
                for predictor, spec in _cell_spectra(fcfg, block, cell, sigmas, clip):
                    yield [{**k, "predictor": predictor} for k in keys], spec.numpy()
            done += 1
            report(progress, done, total)
