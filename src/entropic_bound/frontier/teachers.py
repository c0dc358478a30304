"""X1_teachers (exploratory: no verdict; docs/method.md §8, "Two tables for registration v4"):
per teacher, the noise tolerance of P_invert and its linear twin.

X1_boundaries (frontier/boundaries.py) pools a curve's cases (r* × seeds) into one exact rate;
here each case (teacher = (value map, r*, seed)) gets its own σ_exact: the largest σ of the same
log grid such that its rounded estimate equals r* at σ = 0 and at every grid σ up to and
including it (0.0 when exact at σ = 0 but not at the grid's smallest σ, NaN when not exact at
σ = 0, inf when exact on the whole grid). The grid is scanned upward, every case of the curve
at once (one spectrum per σ, the curve's own, cached with its bisections'), until every case
has failed once.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pandas as pd

#: X1_teachers: one row per case (teacher) of P_invert and P_invert_linear, n ≤ d, frontier's B
TEACHER_COLUMNS = [
    "predictor",
    "class",
    "value_map",
    "r_star",
    "seed",
    "n",
    "d",
    "beta",
    "n_seqs",
    "clean_std",
    "sigma_exact",
    "sigma_exact_rel",
]
#: the predictors of X1_teachers (value map known)
TEACHER_PREDICTORS = ("P_invert", "P_invert_linear")


def exact_through(exact_at: Callable[[int], np.ndarray], size: int) -> np.ndarray:
    """Per case, the largest grid index k such that ``exact_at(j)[case]`` holds for every j in
    -1..k (``exact_at(-1)``: σ = 0; ``exact_at(j)``: [G] bool at grid σ j): -2 when not exact
    at σ = 0, -1 when exact at σ = 0 only, ``size`` when exact on the whole grid.

    Scans the grid upward from its smallest σ, every case at once, and stops once every case has
    failed (no σ past that is asked for)."""
    alive = np.asarray(exact_at(-1), dtype=bool)
    last = np.where(alive, size, -2)
    k = 0
    while alive.any() and k < size:
        failed = alive & ~np.asarray(exact_at(k), dtype=bool)
        last[failed] = k - 1
        alive &= ~failed
        k += 1
    return last


def sigma_of_index(k: int, grid: np.ndarray) -> float:
    """:func:`exact_through`'s index as a σ: NaN (-2), 0 (-1), inf (the whole grid), else grid σ."""
    if k < -1:
        return math.nan
    return 0.0 if k < 0 else (math.inf if k >= len(grid) else float(grid[k]))


def teacher_rows(curve, grid: np.ndarray) -> list[dict]:
    """X1_teachers' rows of ``curve`` (a boundaries.Curve): each case's σ_exact on ``grid``
    (:func:`exact_through`), absolute and relative to the std of the curve's clean output (the
    clean_std of X1_boundaries)."""
    last = exact_through(lambda k: curve.hits(0.0 if k < 0 else float(grid[k])), len(grid))
    std = float(curve.clean.std(unbiased=False))
    rows = []
    for g, k in enumerate(last):
        sig = sigma_of_index(int(k), grid)
        rel = sig / std if std > 0 else math.nan
        rows.append(
            {**curve.key, "r_star": int(curve.r_star[g]), "seed": int(curve.seed[g])}
            | {"clean_std": std, "sigma_exact": sig, "sigma_exact_rel": rel}
        )
    return rows


def teachers_frame(rows: list[dict]) -> pd.DataFrame:
    """X1_teachers from :func:`teacher_rows`' rows, in a fixed order (columns
    :data:`TEACHER_COLUMNS`; empty with them when there are none)."""
    cases = pd.DataFrame(rows, columns=TEACHER_COLUMNS)
    if rows:
        order = ["predictor", "class", "value_map", "n", "beta", "r_star", "seed"]
        cases = cases.sort_values(order, na_position="first").reset_index(drop=True)
    return cases
