"""C8 where softmax distorts, exploratory (no verdict; docs/method.md §8).

C8 compares the rank estimators on learned full-rank L4 kernels at β = 1, where the learned
kernel carries (nearly) all its energy in its top r* components, as on linear attention: the
comparison ends in a tie at zero error and puts "robust to softmax distortion" to no test.
Here every estimator of C8's list (config/claims.yaml) is compared by β on two kinds of
kernels:

* learned: full-rank L4 students trained on the paper's L4 tasks at each β (the same X, A, V
  as the paper's tasks, only the temperature changes; one training job, full rank only);
* data-only: the P_attn spectrum of the frontier (σ = 0, value map unknown, n = the task's n),
  the kernel estimate that softmax does distort.
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pandas as pd

from entropic_bound.analysis import (
    METRICS_COLUMNS,
    estimate_finite,
    exact_summary,
    full_rank_students,
    spectra_matrix,
)
from entropic_bound.core.progress import report
from entropic_bound.tasks.grid import task_specs

COLUMNS = ["kernels", "beta", "estimator", "n", "exact_rate", "mean_abs_error"]
LEARNED = "learned (full-rank L4 student)"
DATA_ONLY = "data-only P_attn (σ = 0, V unknown)"


def tasks_at_beta(cfg: dict, rung: str, beta: float) -> list[tuple[dict, dict]]:
    """The config's tasks of ``rung`` with the temperature set to β: (arrays, meta) each."""
    from entropic_bound.tasks.make import make_task  # torch: the c8_by_beta job needs none

    out = []
    for spec in task_specs(cfg):
        if spec.rung != rung:
            continue
        arrays = make_task(dataclasses.replace(spec, beta=float(beta)))
        meta = json.loads(str(arrays.pop("meta")))
        out.append((arrays, meta))
    return out


def train_full_rank_by_beta(cfg: dict, betas, rung: str = "L4", progress=None) -> pd.DataFrame:
    """train_metrics rows (engine's columns, plus ``beta``) of the full-rank students of
    ``rung`` on its tasks at every β, with the paper's optimiser, seeds and backend;
    ``progress(done, total)`` after each β (see progress.py)."""
    from entropic_bound.config.load import class_optim
    from entropic_bound.core.progress import report
    from entropic_bound.core.rungs import kernel_dim, parse_rung
    from entropic_bound.train.engine import Optim, train_students
    from entropic_bound.train.stage import run_settings

    if not len(betas):  # no β asked for (the large configs): no training
        return pd.DataFrame(columns=[*METRICS_COLUMNS, "beta"])
    t = cfg["train"]
    k = kernel_dim(rung, cfg["task"]["n"], cfg["task"]["d"])
    optim = Optim.from_config(class_optim(cfg, parse_rung(rung)[0]))
    parts = []
    for done, beta in enumerate(betas, 1):
        out = train_students(
            tasks_at_beta(cfg, rung, beta),
            rung,
            [k],
            t["student_seeds"],
            optim,
            **run_settings(cfg),
        )
        parts.append(out["metrics"].assign(beta=float(beta)))
        report(progress, done, len(betas))
    return pd.concat(parts, ignore_index=True)


def _row(kind: str, beta: float, est: str, r_hat, r_star) -> dict:
    s = exact_summary(r_hat, r_star)
    return {
        "kernels": kind,
        "beta": beta,
        "estimator": est,
        "n": s["n"],
        "exact_rate": s["exact_rate"],
        "mean_abs_error": s["mean_abs_error"],
    }


def estimators_by_beta(
    learned: pd.DataFrame | None,
    frontier: pd.DataFrame | None,
    betas,
    estimators,
    n_tokens: int,
    tol: float,
    progress=None,
) -> pd.DataFrame:
    """Exact rate and mean |err| of every estimator per β, learned and data-only kernels.

    ``learned``: :func:`train_full_rank_by_beta`'s table; ``frontier``: frontier.csv (its
    r_hat per estimator of P_attn, L4, σ = 0, V unknown, n = ``n_tokens``).
    Columns: kernels, beta, estimator, n, exact_rate, mean_abs_error.
    ``progress(done, total)`` is called after each β of the learned kernels (the costly part:
    every estimator on every spectrum).
    """
    rows = []
    report(progress, 0, len(betas))
    if learned is not None and not learned.empty:
        full = full_rank_students(learned)
        for i, beta in enumerate(betas, 1):
            g = full[np.isclose(full["beta"], beta)]
            if len(g):
                S = spectra_matrix(g["spectrum"])
                for est in estimators:
                    rows.append(
                        _row(LEARNED, beta, est, estimate_finite(S, est, tol=tol), g["r_star"])
                    )
            report(progress, i, len(betas))
    else:  # nothing learned to estimate: that part is done
        report(progress, len(betas), len(betas))
    if frontier is not None:
        f = frontier[
            (frontier["class"] == "L4")
            & (frontier["predictor"] == "P_attn")
            & (frontier["value_map"] == "unknown")
            & (frontier["n"] == n_tokens)
            & np.isclose(frontier["sigma"], 0.0)
        ]
        for beta in betas:
            g = f[np.isclose(f["beta"], beta)]
            if g.empty:  # a β the frontier grid does not hold
                continue
            for est in estimators:
                e = g[g["estimator"] == est]
                rows.append(_row(DATA_ONLY, beta, est, e["r_hat"], e["r_star"]))
    return pd.DataFrame(rows, columns=COLUMNS)
