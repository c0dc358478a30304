"""The ground every analysis stands on: the columns of the cached input tables, small helpers
(rounding, exact-match summaries, rung order, Spearman ρ, estimator names) and the data-only
predictions. :mod:`.analysis` re-exports the public names.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from entropic_bound.core.estimators import (
    DEFAULT_TOL,
    energy_tau,
    estimate,
    pad_spectra,
    round_rank,
)
from entropic_bound.core.tables import PREDICTION_COLUMNS

#: the static students of docs/method.md §1: full-rank L0 and L1, trained on every task
STATIC_CLASSES = ("L0", "L1")

METRICS_COLUMNS = (
    "task_id",
    "rung",
    "r_star",
    "task_seed",
    "student_class",
    "static_student",
    "rank",
    "seed",
    "R",
    "R_theory",
    "converged",
    "spectrum",
)
DYNAMICS_COLUMNS = (
    "task_id",
    "rung",
    "r_star",
    "student_class",
    "static_student",
    "rank",
    "seed",
    "step",
    "spectrum",
)
TASK_KEYS = ["task_id", "rung", "r_star", "task_seed"]


# ---------------------------------------------------------------- small helpers


def require_columns(df: pd.DataFrame, columns: Iterable[str], table: str) -> pd.DataFrame:
    """Return ``df``; ValueError naming the table and the columns it lacks."""
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(
            f"table {table} lacks column(s) {', '.join(missing)}; rerun the rule that makes it"
        )
    return df


def exact_summary(r_hat, r_star) -> dict:
    """Exact-match count and rate (rounded) and mean |r_hat − r*| (unrounded) of paired arrays."""
    r_hat = np.asarray(r_hat, dtype=np.float64)
    r_star = np.asarray(r_star, dtype=np.float64)
    n = int(len(r_hat))
    if n == 0:
        return {"n": 0, "exact": 0, "exact_rate": np.nan, "mean_abs_error": np.nan}
    exact = int(np.sum(round_rank(r_hat) == r_star))
    return {
        "n": n,
        "exact": exact,
        "exact_rate": exact / n,
        "mean_abs_error": float(np.mean(np.abs(r_hat - r_star))),
    }


def spearman(x, y) -> float:
    """Spearman rank correlation (average ranks for ties); NaN when either side is constant."""
    x, y = pd.Series(np.asarray(x, float)).rank(), pd.Series(np.asarray(y, float)).rank()
    if len(x) < 2 or x.std() == 0 or y.std() == 0:
        return float("nan")
    return float(np.corrcoef(x, y)[0, 1])


def spearman_fillings(lam: np.ndarray, values: np.ndarray, cap: int = 20_000) -> np.ndarray | None:
    """Spearman(λ, values) for every order the unknown (NaN) values can take among the known
    ones and among themselves (ties included): all a rank correlation can see of a filling, so
    the least and the greatest of these are its bounds. None beyond ``cap`` orders."""
    from itertools import product

    unknown = np.flatnonzero(np.isnan(values))
    known = np.unique(values[~np.isnan(values)])
    k = len(unknown)
    edges = np.concatenate([known[:1] - 1, known, known[-1:] + 1]) if len(known) else [0.0, 1.0]
    steps = np.arange(1, k + 1) / (k + 1)
    cand = np.concatenate([known, *[lo + (hi - lo) * steps for lo, hi in zip(edges, edges[1:])]])
    if len(cand) ** k > cap:
        return None
    filled = np.tile(values, (len(cand) ** k, 1))
    filled[:, unknown] = np.array(list(product(cand, repeat=k))).reshape(-1, k)
    y = pd.DataFrame(filled).rank(axis=1).to_numpy()
    x = pd.Series(lam).rank().to_numpy()
    x, y = x - x.mean(), y - y.mean(axis=1, keepdims=True)
    den = np.sqrt((x**2).sum() * (y**2).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (y @ x) / den, np.nan)


def spectra_matrix(spectra: Sequence) -> np.ndarray:
    """A column of variable-length spectra -> [rows, k_max], zero padded (no estimator counts 0)."""
    return pad_spectra([np.asarray(s, dtype=np.float64).ravel() for s in spectra])


def pretty_estimator(name: str) -> str:
    """Label for figures: ``energy_0.99`` -> ``r_E(0.99)``."""
    tau = energy_tau(name)
    return name if tau is None else f"r_E({tau:g})"


def estimate_finite(S, name: str, tol: float = DEFAULT_TOL) -> np.ndarray:
    """One estimator on every row of ``S: [rows, k]``; a row holding NaN or Inf (a diverged
    student) is estimated as NaN, which no exact match accepts."""
    S = np.asarray(S, dtype=np.float64)
    ok = np.isfinite(S).all(axis=-1)
    out = np.full(S.shape[0], np.nan)
    if ok.any():
        out[ok] = estimate(S[ok], name, tol=tol)
    return out


# ---------------------------------------------------------------- data-only predictions


def predictions_of(
    preds: pd.DataFrame, estimator: str, predictor: str | None = None, sigma: float | None = None
) -> pd.DataFrame:
    """Rows of one estimator (and optionally one predictor, one σ) with a rounded ``r_round``."""
    require_columns(preds, PREDICTION_COLUMNS, "data_only_predictions")
    out = preds[preds["estimator"] == estimator]
    if predictor is not None:
        out = out[out["predictor"] == predictor]
    if sigma is not None:
        out = out[np.isclose(out["sigma"].astype(float), sigma)]
    return out.assign(r_round=round_rank(out["r_hat"]))
