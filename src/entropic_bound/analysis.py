"""Analyses on cached tables: knees, static students, learned ranks, the ladder, T2–T4.

Everything here reads the tables the pipeline has already written (no training, no tasks)
and returns plain DataFrames, so that claims, figures and tables are cheap to recompute.
The input tables (``results/<run>/tables/``) and their columns:

* ``data_only_predictions``: task_id, class (the task's rung), r_star, seed, sigma,
  predictor (P_static | P_attn), estimator, r_hat, static_fit_share (P_static rows only).
* ``frontier``: class, value_map, n, d, sigma, beta, r_star, seed, predictor, estimator, r_hat.
* ``train_metrics`` (one row per trained student): task_id, rung, r_star, task_seed,
  student_class, static_student, rank, seed, train_mse, test_mse, R, R_theory, steps,
  converged, spectrum (descending singular values of the learned kernel Q Kᵀ).
* ``train_dynamics``: task_id, rung, r_star, student_class, static_student, rank, seed, step,
  spectrum.

Conventions (docs/reconstruction_claims.md lists every one): rank estimates are rounded half
up before an exact match; absolute errors are taken on the unrounded estimate; a student's
risk at a rank is the median over student seeds.
"""

from __future__ import annotations

import pandas as pd

from .analysis_common import (
    DYNAMICS_COLUMNS,
    FRONTIER_COLUMNS,
    METRICS_COLUMNS,
    PREDICTION_COLUMNS,
    STATIC_CLASSES,
    TASK_KEYS,
    estimate_finite,
    exact_summary,
    mixing_kind,
    predictions_of,
    pretty_estimator,
    require_columns,
    round_rank,
    rung_sort_key,
    sort_rungs,
    spearman,
    spectra_matrix,
)
from .analysis_students import (
    empirical_knees,
    full_rank_students,
    learned_ranks,
    own_class_curves,
    own_class_rows,
    rank_dynamics,
    risk_curves,
    static_student_risk,
)
from .analysis_tables import (
    estimator_table,
    frontier_rate,
    frontier_table,
    intrinsic_ranks,
    ladder_summary,
)
from .estimators import DEFAULT_TAUS, DEFAULT_TOL

#: the public names, including those re-exported from the modules the analyses moved to
__all__ = [
    "DYNAMICS_COLUMNS",
    "FRONTIER_COLUMNS",
    "METRICS_COLUMNS",
    "PREDICTION_COLUMNS",
    "STATIC_CLASSES",
    "TASK_KEYS",
    "empirical_knees",
    "estimate_finite",
    "estimator_table",
    "exact_summary",
    "frontier_rate",
    "frontier_table",
    "full_rank_students",
    "intrinsic_ranks",
    "ladder_summary",
    "learned_ranks",
    "mixing_kind",
    "own_class_curves",
    "own_class_rows",
    "predictions_of",
    "pretty_estimator",
    "rank_dynamics",
    "require_columns",
    "risk_curves",
    "round_rank",
    "run_analyses",
    "rung_sort_key",
    "sort_rungs",
    "spearman",
    "spectra_matrix",
    "static_student_risk",
]


# ---------------------------------------------------------------- the analysis stage


def run_analyses(
    preds: pd.DataFrame,
    metrics: pd.DataFrame | None,
    dynamics: pd.DataFrame | None,
    estimator: str,
    epsilon: float,
    taus=DEFAULT_TAUS,
    tol: float = DEFAULT_TOL,
) -> dict[str, pd.DataFrame]:
    """Every cached analysis table the figures read, keyed by file stem.

    risk_curves, rank_dynamics, learned_ranks, ladder, T2_intrinsic_ranks, T3_estimators.
    Without training tables (``metrics`` None) the training-side tables are empty.
    """
    t2 = intrinsic_ranks(preds, estimator, metrics, epsilon)
    if metrics is not None:
        curves = risk_curves(metrics)
        learned = learned_ranks(metrics, taus=taus, tol=tol)
    else:
        curves, learned = pd.DataFrame(), None
    dyn = rank_dynamics(dynamics, estimator, tol) if dynamics is not None else pd.DataFrame()
    return {
        "risk_curves": curves,
        "rank_dynamics": dyn,
        "learned_ranks": learned if learned is not None else pd.DataFrame(),
        "ladder": ladder_summary(t2),
        "T2_intrinsic_ranks": t2,
        "T3_estimators": estimator_table(learned, preds),
    }
