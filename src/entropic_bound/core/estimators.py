"""Rank estimators on batches of singular-value spectra (docs/method.md §2).

Every estimator takes ``s: [..., k]`` (non-negative; sorted here, so order does not
matter) and returns ``[...]``. An all-zero spectrum has rank 0 under every estimator.
Real-valued estimates (stable, entropy, participation) are returned unrounded; the
analysis rounds them for exact-match rates and reports the absolute error as well.
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


def estimator_names(taus=DEFAULT_TAUS) -> list[str]:
    return ["numerical", "stable", "entropy", "participation"] + [energy_name(t) for t in taus]


def all_estimators(s, taus=DEFAULT_TAUS, tol: float = DEFAULT_TOL) -> dict[str, np.ndarray]:
    """Every estimator of §2 on a batch of spectra: name -> [...] array."""
    s = _spectra(s)
    out = {
        "numerical": numerical_rank(s, tol),
        "stable": stable_rank(s),
        "entropy": entropy_rank(s),
        "participation": participation_rank(s),
    }
    for t in taus:
        out[energy_name(t)] = energy_rank(s, t)
    return out


def estimate(s, name: str, tol: float = DEFAULT_TOL) -> np.ndarray:
    """One estimator by its table name (``numerical``, ``stable``, ..., ``energy_0.99``)."""
    if (tau := energy_tau(name)) is not None:
        return energy_rank(s, tau)
    table = {
        "numerical": lambda x: numerical_rank(x, tol),
        "stable": stable_rank,
        "entropy": entropy_rank,
        "participation": participation_rank,
    }
    if name not in table:
        raise ValueError(f"unknown estimator {name!r}; choose one of {estimator_names()}")
    return table[name](s)


def pad_spectra(spectra) -> np.ndarray:
    """Spectra of different lengths ([k] or [rows, k] each) -> [rows, k_max], zero padded.

    Zeros are counted by no estimator, so padding never changes an estimate.
    """
    blocks = [np.atleast_2d(np.asarray(s, dtype=np.float64)) for s in spectra]
    if not blocks:
        return np.zeros((0, 1))
    width = max(1, max(b.shape[-1] for b in blocks))
    return np.concatenate([np.pad(b, ((0, 0), (0, width - b.shape[-1]))) for b in blocks])


def estimates_long(keys, spectra, taus=DEFAULT_TAUS, tol: float = DEFAULT_TOL):
    """Long table: every row of ``keys`` (a DataFrame, one row per spectrum) × estimator, r_hat."""
    import pandas as pd

    est = all_estimators(pad_spectra(spectra), taus=taus, tol=tol)
    return pd.concat(
        [keys.assign(estimator=name, r_hat=val) for name, val in est.items()], ignore_index=True
    )


def round_rank(r_hat) -> np.ndarray:
    """Round half up (2.5 -> 3): real-valued estimators are rounded before an exact match."""
    return np.floor(np.asarray(r_hat, dtype=np.float64) + 0.5)
