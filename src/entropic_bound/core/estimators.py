"""Rank estimators on batches of singular-value spectra (docs/method.md §2).

Every estimator takes ``s: [..., k]`` (non-negative; sorted here, so order does not
matter) and returns ``[...]``. An all-zero spectrum has rank 0 under every estimator.
Real-valued estimates (stable, entropy, participation) are returned unrounded; the
analysis rounds them for exact-match rates and reports the absolute error as well.

One registry names them all (:data:`PAPER_ESTIMATORS`, :data:`OPT_IN_ESTIMATORS` and
``energy_<τ>``): the config checks, the command line and the tables read it. The paper's
estimators are the ones every table computes; an opt-in estimator (the floor-aware rank) is
computed only where it is asked for by name, so the paper's tables never change with it.
"""

from __future__ import annotations

import numpy as np

#: tolerance of the numerical rank (relative to the largest singular value)
DEFAULT_TOL = 1e-3
#: energy thresholds of r_E(τ); 0.99 is the paper's default estimator
DEFAULT_TAUS = (0.9, 0.95, 0.99)


def _spectra(s) -> np.ndarray:
    s = np.asarray(s, dtype=np.float64)
    if s.ndim == 0 or s.shape[-1] == 0:
        raise ValueError(f"spectrum must have shape [..., k] with k >= 1, got shape {s.shape}")
    if not np.all(np.isfinite(s)):
        raise ValueError("spectrum contains NaN or Inf")
    if np.any(s < 0):
        raise ValueError("spectrum has negative singular values")
    s = -np.sort(-s, axis=-1)  # descending
    # normalise by s_1: every estimator is scale-free, and squares of tiny or huge spectra
    # would otherwise under- or overflow
    top = s[..., :1]
    return np.divide(s, top, out=np.zeros_like(s), where=top > 0)


def _safe_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.divide(a, b, out=np.zeros_like(a), where=b > 0)


def numerical_rank(s, tol: float = DEFAULT_TOL) -> np.ndarray:
    """#{s_i > tol · s_1}."""
    s = _spectra(s)
    return np.sum(s > tol * s[..., :1], axis=-1).astype(np.float64) * (s[..., 0] > 0)


def stable_rank(s) -> np.ndarray:
    """Σ s_i² / s_1²."""
    s = _spectra(s)
    return _safe_div(np.sum(s**2, axis=-1), s[..., 0] ** 2)


def entropy_rank(s) -> np.ndarray:
    """Roy–Vetterli effective rank exp(−Σ p_i log p_i), p_i = s_i / Σ s_j."""
    s = _spectra(s)
    total = np.sum(s, axis=-1, keepdims=True)
    p = _safe_div(s, np.broadcast_to(total, s.shape))
    plogp = np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0)
    return np.exp(-np.sum(plogp, axis=-1)) * (total[..., 0] > 0)


def participation_rank(s) -> np.ndarray:
    """(Σ s_i²)² / Σ s_i⁴."""
    s = _spectra(s)
    return _safe_div(np.sum(s**2, axis=-1) ** 2, np.sum(s**4, axis=-1))


def energy_rank(s, tau: float = 0.99) -> np.ndarray:
    """r_E(τ): least k with Σ_{i≤k} s_i² ≥ τ Σ s_i²  (the Entropic Bound of the surrogate)."""
    if not 0.0 < tau <= 1.0:
        raise ValueError(f"energy threshold tau must lie in (0, 1], got {tau}")
    s = _spectra(s)
    e = np.cumsum(s**2, axis=-1)
    total = e[..., -1:]
    # relative slack so that τ = 1 and exactly-representable ties are not lost to rounding
    reached = e >= tau * total * (1 - 1e-12)
    k = np.argmax(reached, axis=-1) + 1
    return np.where(total[..., 0] > 0, k, 0).astype(np.float64)


def gavish_donoho_omega(beta: float) -> float:
    """ω(β) ≈ 0.56β³ − 0.95β² + 1.82β + 1.43: Gavish & Donoho's (2014) optimal hard threshold
    over the median singular value, for an m × N noise matrix of aspect ratio β = m/N ≤ 1."""
    if not 0.0 <= beta <= 1.0:
        raise ValueError(f"aspect ratio beta must lie in [0, 1], got {beta}")
    return 0.56 * beta**3 - 0.95 * beta**2 + 1.82 * beta + 1.43


def _suffix_median(s: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Median of each row's suffix s[..., m:] of a descending s: [..., k] (0 where empty)."""
    k = s.shape[-1]
    length = k - m
    lo = np.clip(m + (length - 1) // 2, 0, k - 1)
    hi = np.clip(m + length // 2, 0, k - 1)
    take = lambda i: np.take_along_axis(s, i[..., None], axis=-1)[..., 0]  # noqa: E731
    return np.where(length > 0, (take(lo) + take(hi)) / 2, 0.0)


def floor_rank(s, beta: float = 0.0, tol: float = DEFAULT_TOL) -> np.ndarray:
    """The floor-aware rank: how many singular values stand above a flat floor (docs/method.md
    §2, "The floor-aware rank").

    The floor is the median of the spectrum's bulk and the cut is Gavish & Donoho's
    ω(β)·floor (or tol·s₁, if larger: values below the numerical tolerance are zeros, and a floor
    of zeros is no floor). The bulk is found by iteration: m₀ = 0, m_{j+1} = #{s > ω·median(s[m_j:])};
    m is non-decreasing and stops at the least fixed point, which is the rank (at most k steps).
    ``beta``: the aspect ratio of the matrix whose singular values s are; 0 (the default) for the
    Gram spectra of the data-only predictors, sqrt(eig(Σ_b Z_b Z_bᵀ)) = svd of [Z_1 … Z_B], a
    d × B·d_v matrix with B·d_v ≫ d. A flat spectrum has rank 0 (all floor); an exactly low-rank
    one (zeros beyond r ≤ k/2) has rank r. Zeros count as floor, so unlike the other estimators
    it must be given each spectrum at its own length, not zero-padded.
    """
    s = _spectra(s)
    omega = gavish_donoho_omega(beta)
    m = np.zeros(s.shape[:-1], dtype=np.int64)
    for _ in range(s.shape[-1] + 1):
        cut = np.maximum(omega * _suffix_median(s, m), tol * s[..., 0])
        new = np.sum(s > cut[..., None], axis=-1)
        if np.array_equal(new, m):
            break
        m = new
    return np.where(s[..., 0] > 0, m, 0).astype(np.float64)


#: why a spectrum has no floor for the floor-aware rank to count above (docs/method.md §2,
#: "When a spectrum has a floor"); "" when it has one
MINOR_BULK, ZERO_BULK, SLOPED_BULK = "bulk under half", "bulk of zeros", "bulk not flat"
#: the lower quantile of the bulk that must stay within ω(β) of its median
FLOOR_QUANTILE = 0.1


def floor_reasons(
    s, beta: float = 0.0, tol: float = DEFAULT_TOL, quantile: float = FLOOR_QUANTILE, flatness=None
) -> np.ndarray:
    """Whether each spectrum of ``s: [..., k]`` has a floor, as the floor-aware rank assumes:
    [...] strings, "" where it has one, else the reason (:data:`ZERO_BULK`,
    :data:`MINOR_BULK`, :data:`SLOPED_BULK`).

    The floor-aware rank's null is noise with a flat spectrum (Marchenko–Pastur), holding most
    of the values: its values lie within a factor ω(β) of their median on both sides. With m
    the floor-aware rank and s[m:] the bulk, a spectrum has a floor when (i) the bulk is not
    numerical zeros (median > tol·s₁: beyond an exactly low-rank matrix's rank the "floor" is
    zeros and the rank is the numerical rank), (ii) the bulk is at least half the spectrum
    (m ≤ k/2, the regime where the rank is scale-invariant and every bulk median a floor value,
    §2), and (iii) its lower ``quantile`` is at least ``flatness`` (default 1/ω(β)) times its
    median (the cut ω(β)·median bounds it above). A smoothly decaying spectrum fails (ii) or
    (iii): over a short enough tail any decay looks flat, over half of it a power law does not.
    """
    s = _spectra(s)
    flat = 1.0 / gavish_donoho_omega(beta) if flatness is None else flatness
    m = floor_rank(s, beta, tol).astype(np.int64)
    k = s.shape[-1]
    out = []
    for row, mi in zip(s.reshape(-1, k), m.reshape(-1), strict=True):
        bulk = row[mi:]
        if row[0] == 0 or bulk.size == 0 or np.median(bulk) <= tol * row[0]:
            out.append(ZERO_BULK if row[0] == 0 or bulk.size else MINOR_BULK)
        elif 2 * mi > k:
            out.append(MINOR_BULK)
        elif np.quantile(bulk, quantile) < flat * np.median(bulk):
            out.append(SLOPED_BULK)
        else:
            out.append("")
    return np.array(out, dtype=object).reshape(m.shape)


def energy_name(tau: float) -> str:
    """The table name of r_E(τ): ``energy_0.99``. Names are built and parsed only here."""
    return f"energy_{tau:g}"


def energy_tau(name: str) -> float | None:
    """τ of an ``energy_<τ>`` name, None for any other estimator (ValueError if τ is not a number)."""
    if not name.startswith("energy_"):
        return None
    try:
        return float(name.split("_", 1)[1])
    except ValueError:
        raise ValueError(f"estimator {name!r}: energy_<tau> needs a number tau") from None


#: the paper's estimators without τ (every table computes them): name -> (s, tol) -> rank
PAPER_ESTIMATORS = {
    "numerical": numerical_rank,
    "stable": lambda s, tol: stable_rank(s),
    "entropy": lambda s, tol: entropy_rank(s),
    "participation": lambda s, tol: participation_rank(s),
}
#: opt-in estimators: computed only where named (never in the paper's tables)
OPT_IN_ESTIMATORS = {
    "floor": lambda s, tol: floor_rank(s, tol=tol),
}


def estimator_names(taus=DEFAULT_TAUS, opt_in: bool = False) -> list[str]:
    """The table names: the paper's estimators and r_E(τ) for ``taus``; with ``opt_in``, then
    the opt-in ones (``floor``)."""
    names = [*PAPER_ESTIMATORS, *(energy_name(t) for t in taus)]
    return names + list(OPT_IN_ESTIMATORS) if opt_in else names


def is_opt_in(name: str) -> bool:
    return name in OPT_IN_ESTIMATORS


def all_estimators(
    s, taus=DEFAULT_TAUS, tol: float = DEFAULT_TOL, extra=()
) -> dict[str, np.ndarray]:
    """Every estimator of §2 on a batch of spectra: name -> [...] array; ``extra``: opt-in
    names to add (after the paper's)."""
    s = _spectra(s)
    out = {name: f(s, tol) for name, f in PAPER_ESTIMATORS.items()}
    for t in taus:
        out[energy_name(t)] = energy_rank(s, t)
    for name in extra:
        out[name] = estimate(s, name, tol)
    return out


def estimate(s, name: str, tol: float = DEFAULT_TOL) -> np.ndarray:
    """One estimator by its table name (``numerical``, ``stable``, ..., ``energy_0.99``,
    ``floor``)."""
    if (tau := energy_tau(name)) is not None:
        return energy_rank(s, tau)
    table = {**PAPER_ESTIMATORS, **OPT_IN_ESTIMATORS}
    if name not in table:
        raise ValueError(
            f"unknown estimator {name!r}; choose one of {estimator_names(opt_in=True)}"
        )
    return table[name](s, tol)


def pad_spectra(spectra) -> np.ndarray:
    """Spectra of different lengths ([k] or [rows, k] each) -> [rows, k_max], zero padded.

    Zeros are counted by no estimator, so padding never changes an estimate.
    """
    blocks = [np.atleast_2d(np.asarray(s, dtype=np.float64)) for s in spectra]
    if not blocks:
        return np.zeros((0, 1))
    width = max(1, max(b.shape[-1] for b in blocks))
    return np.concatenate([np.pad(b, ((0, 0), (0, width - b.shape[-1]))) for b in blocks])


def estimates_long(keys, spectra, taus=DEFAULT_TAUS, tol: float = DEFAULT_TOL, extra=()):
    """Long table: every row of ``keys`` (a DataFrame, one row per spectrum) × estimator, r_hat;
    ``extra``: opt-in estimators, after the others."""
    import pandas as pd

    est = all_estimators(pad_spectra(spectra), taus=taus, tol=tol, extra=extra)
    return pd.concat(
        [keys.assign(estimator=name, r_hat=val) for name, val in est.items()], ignore_index=True
    )


def round_rank(r_hat) -> np.ndarray:
    """Round half up (2.5 -> 3): real-valued estimators are rounded before an exact match."""
    return np.floor(np.asarray(r_hat, dtype=np.float64) + 0.5)
