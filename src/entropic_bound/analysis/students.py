"""Trained students from the cached training tables: risk curves, empirical knees, the static
students' risk, learned ranks and rank dynamics. :mod:`.analysis` re-exports the public names.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from entropic_bound.analysis.columns import (
    DYNAMICS_COLUMNS,
    METRICS_COLUMNS,
    STATIC_CLASSES,
    TASK_KEYS,
    require_columns,
    spectra_matrix,
)
from entropic_bound.analysis.memo import memoised
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
    family = df["rung"].map({r: parse_rung(r)[0] for r in df["rung"].unique()})
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


@memoised
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
    tasks = own[TASK_KEYS].drop_duplicates()
    if isinstance(epsilon, Mapping):
        missing = sorted(set(tasks["task_id"]) - set(epsilon))
        if missing:
            raise KeyError(missing[0])
        eps = own["task_id"].map(epsilon).astype(float)
    else:
        eps = epsilon
    hit = own[own["R"] <= eps].groupby(TASK_KEYS)["rank"].min().rename("r_emp")
    at = own[own["rank"] == own["r_star"]].groupby(TASK_KEYS)["R"].first(skipna=False)
    out = tasks.set_index(TASK_KEYS).join(hit).join(at.rename("R_at_r_star"))
    out = out.astype(float).sort_index().reset_index()
    return out[TASK_KEYS + ["r_emp", "R_at_r_star"]]


def static_student_risk(curves: pd.DataFrame) -> pd.DataFrame:
    """Static-student R per task: min over L0 and L1 of their median R over seeds.

    Static students are rows with ``static_student`` True. Where a static class has no such
    row on a task but is the task's own class (an L0 or L1 task whose full-rank own student
    doubles as its static student), the own class at its highest rank stands in.
    Columns: task_id, rung, r_star, task_seed, R_static_L0, R_static_L1, static_student_R.
    """
    cols = TASK_KEYS + [f"R_static_{c}" for c in STATIC_CLASSES] + ["static_student_R"]
    tasks = curves[TASK_KEYS].drop_duplicates().sort_values(TASK_KEYS, ignore_index=True)
    c = curves[curves["student_class"].isin(STATIC_CLASSES)]
    static = c["static_student"].astype(bool)
    by = [c["task_id"], c["student_class"]]
    # a class's static rows where it has any on the task, else its own-class rows
    c = c[static | ~static.groupby(by).transform("any")]
    by = [c["task_id"], c["student_class"]]
    c = c[c["rank"] == c["rank"].groupby(by).transform("max")]
    best = c.pivot_table(index="task_id", columns="student_class", values="R", aggfunc="min")
    best = best.reindex(columns=list(STATIC_CLASSES)).add_prefix("R_static_").astype(float)
    out = tasks.merge(best, left_on="task_id", right_index=True, how="left")
    # NaN where neither class has a finite R
    out["static_student_R"] = out[[f"R_static_{k}" for k in STATIC_CLASSES]].min(axis=1)
    return out.reindex(columns=cols)


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
