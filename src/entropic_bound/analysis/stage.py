"""Stage ``analyses`` (workflow/rules/analysis.smk): every cached analysis table the figures
and claims read, from the pipeline's tables (no training, no tasks)."""

from __future__ import annotations

import pandas as pd

from entropic_bound.analysis.students import learned_ranks, rank_dynamics, risk_curves
from entropic_bound.analysis.tables import estimator_table, intrinsic_ranks, ladder_summary
from entropic_bound.core.estimators import DEFAULT_TAUS, DEFAULT_TOL


def run_analyses(
    preds: pd.DataFrame,
    metrics: pd.DataFrame | None,
    dynamics: pd.DataFrame | None,
    estimator: str,
    epsilon: float,
    taus=DEFAULT_TAUS,
    tol: float = DEFAULT_TOL,
    sigma: float = 0.0,
) -> dict[str, pd.DataFrame]:
    """Every cached analysis table the figures read, keyed by file stem.

    risk_curves, rank_dynamics, learned_ranks, ladder, T2_intrinsic_ranks, T3_estimators.
    Without training tables (``metrics`` None) the training-side tables are empty. T2 and the
    ladder read the predictions at ``sigma``: the tasks' own noise (``task.sigma``; 0 for every
    paper config), not the noisy copies; so does T3's data-only half.
    """
    t2 = intrinsic_ranks(preds, estimator, metrics, epsilon, sigma=sigma)
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
        "T3_estimators": estimator_table(learned, preds, sigma=sigma),
    }
