"""The predictability frontier: data-only predictors over a grid, no training (docs/method.md §5).

Cells share what they can so that the grid costs seconds: the inputs X depend on
(n, seed), the kernel A on (r*, seed), the value map and noise on the seed, so cells that
differ in σ, β or the value map differ in nothing else; each predictor's per-sequence
inverse (X̃⁺, the P_static and P_invert normal matrices) is factorised once per (n, seed).

``p_attn_sigma: linear`` (the large configs) also shares P_attn's noise: Z_b = X̃_b⁺(Y_b + σE_b)
= X̃_b⁺Y_b + σ X̃_b⁺E_b, so C(σ) = Σ_b Z_b Z_bᵀ = G_YY + σ(G_YE + G_YEᵀ) + σ² G_EE with G_EE once
per (n, seed): one product per cell instead of one per σ, equal to forming every copy
(``formed``, the paper tables) up to float64 rounding. P_static and P_invert form the copies.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import torch

from entropic_bound.core.estimators import estimates_long
from entropic_bound.core.progress import report
from entropic_bound.core.seeds import FRONTIER_INPUTS, FRONTIER_KERNEL, frontier_stream
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
from entropic_bound.predict.static import rearranged_summary
from entropic_bound.tasks.make import haar_orthonormal, teacher_kernel
from entropic_bound.tasks.mixing import operator_terms

#: the columns of tables/frontier.csv
FRONTIER_COLUMNS = (
    "class",
    "value_map",
    "n",
    "d",
    "sigma",
    "beta",
    "r_star",
    "seed",
    "predictor",
    "estimator",
    "r_hat",
)
COLUMNS = list(FRONTIER_COLUMNS)  # the frontier table: the columns analyses read
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
    return estimates_long(pd.DataFrame(rows), spectra, taus=taus, tol=tol)[COLUMNS]


def frontier_spectra(
    fcfg: dict,
    base_seed: int = 0,
    clip: float = DEFAULT_CLIP,
    progress=None,
    predictors=("P_attn", "P_static", "P_invert"),
):
    """Yield (keys, spectra) of every cell × applicable predictor: keys a list of S row dicts
    (one per σ of the cell, with ``predictor``), spectra [S, k] (k = d, or n for P_static).
    ``predictors``: the ones to compute (the others are skipped, not only left out)."""
    d, B = fcfg["d"], fcfg["n_seqs"]
    linear = fcfg.get("p_attn_sigma", "formed") == "linear"
    sigmas = torch.tensor(fcfg["sigma"], dtype=torch.float64)[:, None, None]
    total = len(fcfg["n"]) * len(fcfg["seeds"]) * len(fcfg["r_star"])
    done = 0

    def emit(keys: list[dict], spec: torch.Tensor):
        return keys, spec.numpy()

    for n, seed in itertools.product(fcfg["n"], fcfg["seeds"]):
        X, E, V_haar = frontier_inputs(base_seed, n, seed, B, d)
        pinv = attention_native_pinv(X)
        if linear:  # X̃⁺E and G_EE, shared by every cell of (n, seed)
            ZE = pinv @ E
            G_EE = attention_native_gram(ZE, ZE)
        static_ok = B >= n * d and "P_static" in predictors
        if static_ok:
            x = X.reshape(1, B, n * d)
            chol_static = torch.linalg.cholesky(x.transpose(1, 2) @ x)
        S = len(fcfg["sigma"])
        invert_ok = n <= d and B * n * (n - 1) >= d * d and "P_invert" in predictors
        if invert_ok:  # P_invert's normal matrix and per-sequence X⁺ (for the S noisy copies)
            chol_inv = torch.linalg.cholesky(inversion_normal_matrix(X))
            X_inv = token_pinv_exact(X.expand(S, -1, -1, -1))
        Ys = torch.empty(S, B, n, d, dtype=torch.float64)  # the noisy copies, refilled per cell
        for r_star in fcfg["r_star"]:
            A = frontier_kernel(fcfg, base_seed, r_star, seed)
            XAX = X @ A @ X.transpose(-1, -2)
            for cls in fcfg["classes"]:
                betas = fcfg["beta"] if cls == "L4" else [None]
                for beta in betas:
                    M = qk_operator(cls, XAX, n, d, beta)
                    MX = M @ X
                    for value_map in fcfg["value_maps"]:
                        V = V_haar if value_map == "unknown" else torch.eye(d, dtype=torch.float64)
                        clean = MX @ V
                        inverted = invert_ok and cls == "L4" and value_map == "known"
                        for i, s in enumerate(fcfg["sigma"]):  # Ys[i] = clean + s·E, in place
                            if not linear or static_ok or inverted:
                                torch.mul(E, s, out=Ys[i : i + 1]).add_(clean)
                        key = [
                            {
                                "class": cls,
                                "value_map": value_map,
                                "n": n,
                                "d": d,
                                "sigma": s,
                                "beta": beta if beta is not None else np.nan,
                                "r_star": r_star,
                                "seed": seed,
                            }
                            for s in fcfg["sigma"]
                        ]
                        if linear:
                            Zc = pinv @ clean
                            G_YE = attention_native_gram(Zc, ZE)
                            C = attention_native_gram(Zc, Zc) + sigmas * (
                                G_YE + G_YE.transpose(-1, -2)
                            )
                            spec = attention_native_eig(C + sigmas**2 * G_EE)
                        else:
                            spec = attention_native_spectrum(pinv.expand(S, -1, -1, -1), Ys)
                        yield emit([{**k, "predictor": "P_attn"} for k in key], spec)
                        if static_ok:
                            y = Ys.reshape(S, B, n * d)
                            K = torch.cholesky_solve(x.transpose(1, 2) @ y, chol_static).transpose(
                                1, 2
                            )
                            M_hat = torch.as_tensor(rearranged_summary(K, n, d)["M_hat"])
                            spec = (
                                log_inversion_spectrum(M_hat, clip)
                                if cls == "L4"
                                else torch.linalg.svdvals(M_hat)
                            )
                            yield emit([{**k, "predictor": "P_static"} for k in key], spec)
                        if inverted:
                            spec = inversion_spectrum(
                                X.expand(S, -1, -1, -1),
                                Ys,
                                None,
                                chol_inv,
                                clip,
                                Xp=X_inv,
                            )
                            yield emit([{**k, "predictor": "P_invert"} for k in key], spec)
            done += 1
            report(progress, done, total)
