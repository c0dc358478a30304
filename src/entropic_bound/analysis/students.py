"""Trained students from the cached training tables: risk curves, empirical knees, the static
students' risk, learned ranks and rank dynamics. :mod:`.analysis` re-exports the public names.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from entropic_bound.analysis.columns import (
    DYNAMICS_COLUMNS,
    METRICS_COLUMNS,
    STATIC_CLASSES,
    TASK_KEYS,
    require_columns,
    spectra_matrix,
)
from entropic_bound.core.estimators import (
    DEFAULT_TAUS,
    DEFAULT_TOL,
    all_estimators,
    estimate,
)
from entropic_bound.core.rungs import mixing_kind, parse_rung

# ---------------------------------------------------------------- trained students


def _own_class_mask(df: pd.DataFrame) -> pd.Series:
    """Rows whose student is of the task's own class (``student_class`` = rung or its family)."""
    family = df["rung"].map(lambda r: parse_rung(r)[0])
    return (~df["static_student"].astype(bool)) & (
        (df["student_class"] == df["rung"]) | (df["student_class"] == family)
    )


def own_class_rows(metrics: pd.DataFrame) -> pd.DataFrame:
    """Students of the task's own class (the rank sweep), static students excluded."""
    require_columns(metrics, METRICS_COLUMNS, "train_metrics")
    return metrics[_own_class_mask(metrics)]


def _at_top_rank(df: pd.DataFrame) -> pd.DataFrame:
    """Rows at the highest rank present for their task (the full-rank students)."""
    return df[df["rank"] == df.groupby("task_id")["rank"].transform("max")]


def risk_curves(metrics: pd.DataFrame) -> pd.DataFrame:
    """Risk against rank: one row per (task, student class, static flag, rank).

    Columns: task_id, rung, r_star, task_seed, student_class, static_student, rank,
    R (median over student seeds), R_lo, R_hi (min and max over seeds), R_theory, n_seeds,
    converged (fraction of seeds).
    """
    require_columns(metrics, METRICS_COLUMNS, "train_metrics")
    keys = TASK_KEYS + ["student_class", "static_student", "rank"]
    m = metrics.assign(
        static_student=metrics["static_student"].astype(bool),
        converged=metrics["converged"].astype(float),
    )
    g = m.groupby(keys, sort=True)
    out = g.agg(
        R=("R", "median"),
        R_lo=("R", "min"),
        R_hi=("R", "max"),
        R_theory=("R_theory", "first"),
        n_seeds=("seed", "nunique"),
        converged=("converged", "mean"),
    ).reset_index()
    return out


def own_class_curves(curves: pd.DataFrame) -> pd.DataFrame:
    """The rank sweep of each task's own class from :func:`risk_curves`."""
    return curves[_own_class_mask(curves)]


def empirical_knees(curves: pd.DataFrame, epsilon) -> pd.DataFrame:
    """r_emp per task: least rank of the own class whose median R ≤ ε (NaN if none); ``epsilon``
    one float, or a mapping task_id -> ε_task (registration v2, docs/method.md §5b).

    Returns columns task_id, rung, r_star, task_seed, r_emp, R_at_r_star (median R at r*).
    """
    own = own_class_curves(curves)
    rows = []
    for key, g in own.groupby(TASK_KEYS, sort=True):
        g = g.sort_values("rank")
        eps = epsilon[key[0]] if isinstance(epsilon, Mapping) else epsilon
        hit = g.loc[g["R"] <= eps, "rank"]
        at = g.loc[g["rank"] == key[2], "R"]
        rows.append(
            {
                **dict(zip(TASK_KEYS, key)),
                "r_emp": float(hit.iloc[0]) if len(hit) else np.nan,
                "R_at_r_star": float(at.iloc[0]) if len(at) else np.nan,
            }
        )
    return pd.DataFrame(rows, columns=TASK_KEYS + ["r_emp", "R_at_r_star"])


def static_student_risk(curves: pd.DataFrame) -> pd.DataFrame:
    """Static-student R per task: min over L0 and L1 of their median R over seeds.

    Static students are rows with ``static_student`` True. Where a static class has no such
    row on a task but is the task's own class (an L0 or L1 task whose full-rank own student
    doubles as its static student), the own class at its highest rank stands in.
    Columns: task_id, rung, r_star, task_seed, R_static_L0, R_static_L1, static_student_R.
    """
    rows = []
    for key, g in curves.groupby(TASK_KEYS, sort=True):
        row = dict(zip(TASK_KEYS, key))
        for cls in STATIC_CLASSES:
            s = g[(g["student_class"] == cls) & g["static_student"]]
            if s.empty:
                own = g[(g["student_class"] == cls) & ~g["static_student"]]
                s = own[own["rank"] == own["rank"].max()] if not own.empty else own
            row[f"R_static_{cls}"] = (
                float(s.loc[s["rank"] == s["rank"].max(), "R"].min()) if not s.empty else np.nan
            )
        both = [row[f"R_static_{c}"] for c in STATIC_CLASSES]
        row["static_student_R"] = float(np.nanmin(both)) if np.any(np.isfinite(both)) else np.nan
        rows.append(row)
    cols = TASK_KEYS + [f"R_static_{c}" for c in STATIC_CLASSES] + ["static_student_R"]
    return pd.DataFrame(rows, columns=cols)


def full_rank_students(metrics: pd.DataFrame) -> pd.DataFrame:
    """Own-class students at the highest rank trained on their task (rank r = k, unconstrained)."""
    return _at_top_rank(own_class_rows(metrics))


def learned_ranks(
    metrics: pd.DataFrame, taus=DEFAULT_TAUS, tol: float = DEFAULT_TOL
) -> pd.DataFrame:
    """Every estimator on the learned kernel of every full-rank own-class student (long form).

    Columns: task_id, rung, r_star, task_seed, seed, mixing, estimator, r_hat.
    """
    full = full_rank_students(metrics)
    cols = TASK_KEYS + ["seed", "mixing", "estimator", "r_hat"]
    if full.empty:
        return pd.DataFrame(columns=cols)
    est = all_estimators(spectra_matrix(full["spectrum"]), taus=taus, tol=tol)
    keys = full[TASK_KEYS + ["seed"]].reset_index(drop=True)
    keys["mixing"] = keys["rung"].map(mixing_kind)
    return pd.concat(
        [keys.assign(estimator=k, r_hat=v) for k, v in est.items()], ignore_index=True
    )[cols]


def rank_dynamics(dynamics: pd.DataFrame, estimator: str, tol: float = DEFAULT_TOL) -> pd.DataFrame:
    """The estimated rank of the learned kernel over training, full-rank own-class students.

    Columns: task_id, rung, r_star, seed, step, r_hat (unrounded).
    """
    require_columns(dynamics, DYNAMICS_COLUMNS, "train_dynamics")
    full = _at_top_rank(dynamics[_own_class_mask(dynamics)]).sort_values(
        ["task_id", "seed", "step"]
    )
    cols = ["task_id", "rung", "r_star", "seed", "step", "r_hat"]
    if full.empty:
        return pd.DataFrame(columns=cols)
    S = spectra_matrix(full["spectrum"])
    return full[cols[:-1]].assign(r_hat=estimate(S, estimator, tol=tol)).reset_index(drop=True)
