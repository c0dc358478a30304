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

Conventions (docs/method.md lists every one): rank estimates are rounded half
up before an exact match; absolute errors are taken on the unrounded estimate; a student's
risk at a rank is the median over student seeds.
"""

from entropic_bound.core.lazy import lazy_exports

#: public name -> the module that defines it (round_rank, sort_rungs, rung_sort_key and
#: mixing_kind live in core; re-exported here, where they were first imported from)
_EXPORTS = {
    **dict.fromkeys(
        [
            "DYNAMICS_COLUMNS",
            "METRICS_COLUMNS",
            "STATIC_CLASSES",
            "TASK_KEYS",
            "estimate_finite",
            "exact_summary",
            "predictions_of",
            "pretty_estimator",
            "require_columns",
            "spearman",
            "spearman_fillings",
            "spectra_matrix",
        ],
        "columns",
    ),
    **dict.fromkeys(
        [
            "empirical_knees",
            "full_rank_students",
            "learned_ranks",
            "own_class_curves",
            "own_class_rows",
            "rank_dynamics",
            "risk_curves",
            "static_student_risk",
        ],
        "students",
    ),
    **dict.fromkeys(
        ["estimator_table", "frontier_rate", "frontier_table", "intrinsic_ranks", "ladder_summary"],
        "tables",
    ),
    "run_analyses": "stage",
    "FRONTIER_COLUMNS": "..core.tables",
    "PREDICTION_COLUMNS": "..core.tables",
    "round_rank": "..core.estimators",
    **dict.fromkeys(["mixing_kind", "rung_sort_key", "sort_rungs"], "..core.rungs"),
}
__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
