"""Decisions made by a threshold, and how far each is from flipping (``entropic-bound verify``;
docs/reproducibility.md, "Decisions made by a threshold").

A rank estimate such as the numerical rank #{s_i > tol·s_1}, r_E(τ) or the floor-aware rank is a
decision, not a float: on another CPU a singular value that sits at the threshold may land on the
other side, and the rank moves by one. A rounded real-valued estimate (the exact rate rounds
stable, entropy and participation ranks half up) and a ``best_route`` (the least of a row's
``R_*``) are decisions too. The **margin** of a decision says how far its deciding quantity is
from the threshold, in the units in which its cross-CPU spread is measured:

* a rank of a spectrum s (numerical, ``energy_<τ>``, ``floor``): the least uniform perturbation
  of the normalised spectrum q = s/s_1 (every q_i moved by at most δ, Weyl's bound on what a
  perturbation of the matrix of relative norm δ does) that changes the rank, to first order;
* a rounded real-valued estimate: |r̂ − (⌊r̂⌋ + ½)| / |r̂|, relative like the column's rtol;
* ``best_route``: (R_second − R_best) / R_best, relative like the ``R_*`` columns' rtol.

A flip is *within rounding* when the margin of each run that records one is at most the spread.
"""

from __future__ import annotations

import numpy as np

from entropic_bound.core.estimators import (
    DEFAULT_TOL,
    energy_tau,
    floor_rank,
    gavish_donoho_omega,
)

#: estimators whose value is a count decided by a threshold on the spectrum
SPECTRAL = ("numerical", "floor")


def is_spectral(estimator: str) -> bool:
    """Whether ``estimator`` counts singular values against a threshold (a rank decision)."""
    return estimator in SPECTRAL or energy_tau(estimator) is not None


def _normalised(s) -> np.ndarray:
    s = np.sort(np.asarray(s, dtype=np.float64))[::-1]
    return s / s[0] if len(s) and s[0] > 0 else np.zeros_like(s)


def spectral_margin(s, estimator: str, tol: float = DEFAULT_TOL) -> float:
    """The margin of ``estimator``'s rank of the spectrum ``s`` (module docstring): the least δ
    such that moving every s_i/s_1 by at most δ can change the rank (first order)."""
    q = _normalised(s)
    if len(q) < 2 or q[0] == 0:
        return float("inf")
    if estimator == "numerical":
        return float(np.min(np.abs(q[1:] - tol)))
    if (tau := energy_tau(estimator)) is not None:
        e = np.cumsum(q**2)
        c = e[:-1] / e[-1]
        # |Δc_k| ≤ 2δ·Σq/Σq² for a uniform δ
        return float(np.min(np.abs(c - tau)) * e[-1] / (2 * np.sum(q)))
    if estimator == "floor":
        omega = gavish_donoho_omega(0.0)
        m = int(floor_rank(q[None])[0])
        bulk = q[m:]
        cut = max(omega * float(np.median(bulk)) if bulk.size else 0.0, tol)
        # the cut (ω·median, or tol·s_1) moves by at most ω·δ when each q_i moves by δ
        return float(np.min(np.abs(q[1:] - cut)) / (1 + omega))
    raise ValueError(f"{estimator!r} is not a rank decided by a threshold")


def rounding_margin(r_hat) -> np.ndarray:
    """|r̂ − (⌊r̂⌋ + ½)| / |r̂|: how far a real-valued estimate is from rounding the other way."""
    r = np.asarray(r_hat, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.abs(r - (np.floor(r) + 0.5)) / np.abs(r)


def route_margin(values) -> float:
    """(second least − least) / least of a row's route values (NaN ignored): how far
    ``best_route`` is from naming another route."""
    v = np.sort(np.asarray(values, dtype=np.float64)[np.isfinite(values)])
    if len(v) < 2:
        return float("inf")
    return float((v[1] - v[0]) / abs(v[0])) if v[0] else float("inf")
