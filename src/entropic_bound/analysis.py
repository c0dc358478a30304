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

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from .estimators import (
    DEFAULT_TAUS,
    DEFAULT_TOL,
    all_estimators,
    energy_tau,
    estimate,
    pad_spectra,
)
from .rungs import ladder_lambda, parse_rung

#: the static students of SCIENCE.md §1: full-rank L0 and L1, trained on every task
STATIC_CLASSES = ("L0", "L1")

PREDICTION_COLUMNS = (
    "task_id",
    "class",
    "r_star",
    "seed",
    "sigma",
    "predictor",
    "estimator",
    "r_hat",
    "static_fit_share",
)
FRONTIER_COLUMNS = (
    "class",
    "value_map",
    "n",
    "d",
    "sigma",
    "beta",
    "r_star",
    "seed",
    "predictor",
    "estimator",
    "r_hat",
)
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


def round_rank(r_hat) -> np.ndarray:
    """Round half up (2.5 -> 3): real-valued estimators are rounded before an exact match."""
    return np.floor(np.asarray(r_hat, dtype=np.float64) + 0.5)


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


def rung_sort_key(rung: str) -> tuple:
    """Ladder order L0 → L1 → L2 → Lλ (by λ) → L4, then L3 (linear attention, off the ladder)."""
    cls, lam = parse_rung(rung)
    order = {"L0": 0, "L1": 1, "L2": 2, "Lam": 3, "L4": 4, "L3": 5}[cls]
    return (order, lam or 0.0)


def sort_rungs(rungs: Iterable[str]) -> list[str]:
    return sorted(set(rungs), key=rung_sort_key)


def mixing_kind(rung: str) -> str:
    """``linear`` for the linear-mixing rungs (L0, L3), ``softmax`` otherwise."""
    return "linear" if parse_rung(rung)[0] in ("L0", "L3") else "softmax"


def spearman(x, y) -> float:
    """Spearman rank correlation (average ranks for ties); NaN when either side is constant."""
    x, y = pd.Series(np.asarray(x, float)).rank(), pd.Series(np.asarray(y, float)).rank()
    if len(x) < 2 or x.std() == 0 or y.std() == 0:
        return float("nan")
    return float(np.corrcoef(x, y)[0, 1])


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


def empirical_knees(curves: pd.DataFrame, epsilon: float) -> pd.DataFrame:
    """r_emp per task: least rank of the own class whose median R ≤ ε (NaN if none).

    Returns columns task_id, rung, r_star, task_seed, r_emp, R_at_r_star (median R at r*).
    """
    own = own_class_curves(curves)
    rows = []
    for key, g in own.groupby(TASK_KEYS, sort=True):
        g = g.sort_values("rank")
        hit = g.loc[g["R"] <= epsilon, "rank"]
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


# ---------------------------------------------------------------- tables T2–T4 and the ladder


def intrinsic_ranks(
    preds: pd.DataFrame,
    estimator: str,
    metrics: pd.DataFrame | None,
    epsilon: float,
    sigma: float = 0.0,
) -> pd.DataFrame:
    """T2: per task (at noise σ): r*, P_static, P_attn (rounded), r_emp, static-fit share,
    static-student R.

    Columns: task_id, rung, lambda, r_star, task_seed, sigma, P_static, P_attn, P_static_raw,
    P_attn_raw, static_fit_share, r_emp, static_student_R. Without training tables the last
    two are NaN.
    """
    p = predictions_of(preds, estimator, sigma=sigma)
    wide = p.pivot_table(
        index=["task_id", "class", "r_star", "seed"],
        columns="predictor",
        values=["r_round", "r_hat"],
        aggfunc="first",
    )
    out = pd.DataFrame(index=wide.index)
    for pred in ("P_static", "P_attn"):
        out[pred] = wide.get(("r_round", pred), np.nan)
        out[f"{pred}_raw"] = wide.get(("r_hat", pred), np.nan)
    share = p[p["predictor"] == "P_static"].set_index(["task_id", "class", "r_star", "seed"])
    out["static_fit_share"] = share["static_fit_share"]
    out = out.reset_index().rename(columns={"class": "rung", "seed": "task_seed"})
    out["sigma"] = sigma
    out["lambda"] = out["rung"].map(ladder_lambda)
    if metrics is not None:
        curves = risk_curves(metrics)
        knees = empirical_knees(curves, epsilon)[["task_id", "r_emp"]]
        static = static_student_risk(curves)[["task_id", "static_student_R"]]
        out = out.merge(knees, on="task_id", how="left").merge(static, on="task_id", how="left")
    else:
        out["r_emp"], out["static_student_R"] = np.nan, np.nan
    out = out.sort_values(
        ["rung", "r_star", "task_seed"],
        key=lambda c: c.map(rung_sort_key) if c.name == "rung" else c,
    )
    return out[
        [
            "task_id",
            "rung",
            "lambda",
            "r_star",
            "task_seed",
            "sigma",
            "P_static",
            "P_attn",
            "P_static_raw",
            "P_attn_raw",
            "static_fit_share",
            "r_emp",
            "static_student_R",
        ]
    ].reset_index(drop=True)


def ladder_summary(t2: pd.DataFrame) -> pd.DataFrame:
    """Per rung (ladder order) from T2: where the static picture breaks.

    Columns: rung, lambda, n_tasks, P_static_exact_rate, P_static_abs_error,
    static_fit_share, static_student_R, r_emp_exact_rate, P_attn_exact_rate.
    """
    rows = []
    for rung in sort_rungs(t2["rung"]):
        g = t2[t2["rung"] == rung]
        st = exact_summary(g["P_static_raw"], g["r_star"])
        at = exact_summary(g["P_attn_raw"], g["r_star"])
        trained = g["r_emp"].notna().any() or g["static_student_R"].notna().any()
        # a task without a knee (r_emp NaN) counts as a miss; without training, no rate at all
        r_emp_rate = float((g["r_emp"] == g["r_star"]).mean()) if trained else np.nan
        rows.append(
            {
                "rung": rung,
                "lambda": ladder_lambda(rung),
                "n_tasks": len(g),
                "P_static_exact_rate": st["exact_rate"],
                "P_static_abs_error": st["mean_abs_error"],
                "static_fit_share": g["static_fit_share"].mean(),
                "static_student_R": g["static_student_R"].mean(),
                "r_emp_exact_rate": r_emp_rate,
                "P_attn_exact_rate": at["exact_rate"],
            }
        )
    return pd.DataFrame(rows)


def estimator_table(
    learned: pd.DataFrame | None,
    preds: pd.DataFrame,
    linear_rung: str = "L3",
    softmax_rung: str = "L4",
) -> pd.DataFrame:
    """T3: exact rate and mean |error| per estimator, linear vs softmax attention.

    Two kinds of kernels: the learned kernels of full-rank students (``learned``) and the
    data-only P_attn spectrum at σ = 0; linear = ``linear_rung`` (L3), softmax =
    ``softmax_rung`` (L4), the same QK kernel A with and without the softmax.
    Columns: kernels, mixing, rung, estimator, n, exact_rate, mean_abs_error.
    """
    rows = []
    sources = []
    if learned is not None and not learned.empty:
        sources.append(("learned (full-rank student)", learned))
    clean = preds[(preds["predictor"] == "P_attn") & np.isclose(preds["sigma"].astype(float), 0.0)]
    sources.append(("data-only P_attn (σ = 0)", clean.rename(columns={"class": "rung"})))
    for kind, df in sources:
        for mixing, rung in (("linear", linear_rung), ("softmax", softmax_rung)):
            sub = df[df["rung"] == rung]
            for est in sub["estimator"].drop_duplicates():
                e = sub[sub["estimator"] == est]
                rows.append(
                    {
                        "kernels": kind,
                        "mixing": mixing,
                        "rung": rung,
                        "estimator": est,
                        **{
                            k: v
                            for k, v in exact_summary(e["r_hat"], e["r_star"]).items()
                            if k != "exact"
                        },
                    }
                )
    return pd.DataFrame(
        rows,
        columns=["kernels", "mixing", "rung", "estimator", "n", "exact_rate", "mean_abs_error"],
    )


def frontier_table(frontier: pd.DataFrame) -> pd.DataFrame:
    """T4: exact rate and mean |error| per class × value map × predictor × n × σ × β × estimator.

    β is NaN for L3 (no temperature); each cell pools r* and seeds (``n_cases`` of them).
    """
    require_columns(frontier, FRONTIER_COLUMNS, "frontier")
    keys = ["class", "value_map", "predictor", "estimator", "n", "d", "sigma", "beta"]
    f = frontier.assign(
        exact=(round_rank(frontier["r_hat"]) == frontier["r_star"]).astype(float),
        abs_error=(frontier["r_hat"] - frontier["r_star"]).abs(),
    )
    out = (
        f.groupby(keys, dropna=False, sort=True)
        .agg(
            n_cases=("exact", "size"),
            exact_rate=("exact", "mean"),
            mean_abs_error=("abs_error", "mean"),
        )
        .reset_index()
    )
    return out


def frontier_rate(frontier: pd.DataFrame, estimator: str, **where) -> pd.DataFrame:
    """Rows of the frontier for one estimator matching ``where`` (column -> value or predicate),
    with an ``exact`` column (rounded r_hat == r*)."""
    require_columns(frontier, FRONTIER_COLUMNS, "frontier")
    f = frontier[frontier["estimator"] == estimator]
    for col, val in where.items():
        f = f[val(f[col])] if callable(val) else f[f[col] == val]
    return f.assign(exact=(round_rank(f["r_hat"]) == f["r_star"]).astype(float))


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
