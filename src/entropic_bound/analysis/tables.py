"""Tables T2–T4 and the ladder summary, from the predictions and the trained students.
:mod:`.analysis` re-exports the public names.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from entropic_bound.analysis.columns import (
    exact_summary,
    predictions_of,
    require_columns,
)
from entropic_bound.analysis.memo import memoised
from entropic_bound.analysis.students import (
    empirical_knees,
    risk_curves,
    static_student_risk,
)
from entropic_bound.core.estimators import round_rank
from entropic_bound.core.rungs import ladder_lambda, rung_sort_key, sort_rungs
from entropic_bound.core.tables import FRONTIER_COLUMNS

# ---------------------------------------------------------------- tables T2–T4 and the ladder


@memoised
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
    columns = [
        "rung",
        "lambda",
        "n_tasks",
        "P_static_exact_rate",
        "P_static_abs_error",
        "static_fit_share",
        "static_student_R",
        "r_emp_exact_rate",
        "P_attn_exact_rate",
    ]
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
    return pd.DataFrame(rows, columns=columns)  # no tasks: the columns all the same


def estimator_table(
    learned: pd.DataFrame | None,
    preds: pd.DataFrame,
    linear_rung: str = "L3",
    softmax_rung: str = "L4",
    sigma: float = 0.0,
) -> pd.DataFrame:
    """T3: exact rate and mean |error| per estimator, linear vs softmax attention.

    Two kinds of kernels: the learned kernels of full-rank students (``learned``) and the
    data-only P_attn spectrum at the tasks' own noise ``sigma`` (0 in every paper config); linear = ``linear_rung`` (L3), softmax =
    ``softmax_rung`` (L4), the same QK kernel A with and without the softmax.
    Columns: kernels, mixing, rung, estimator, n, exact_rate, mean_abs_error.
    """
    rows = []
    sources = []
    if learned is not None and not learned.empty:
        sources.append(("learned (full-rank student)", learned))
    own = np.isclose(preds["sigma"].astype(float), sigma)
    clean = preds[(preds["predictor"] == "P_attn") & own]
    sources.append((f"data-only P_attn (σ = {sigma:g})", clean.rename(columns={"class": "rung"})))
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
