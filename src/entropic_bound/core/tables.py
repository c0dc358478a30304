"""The columns of the tables one stage writes and later stages read, torch-free.

The writers (``predict.stage``, ``frontier.grid``) need torch; the readers (the analyses, the
claims, the figures) do not, and a job that imports torch pays ~1 CPU s for it before any
work (docs/performance.md). The column names live here so that a reader can check a table
without importing its writer.
"""

from __future__ import annotations

#: the columns of tables/data_only_predictions.csv
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
#: the columns of tables/frontier.csv
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

#: opt-in estimators (core/estimators.py) the frontier grid computes besides the paper's: the
#: floor-aware rank, a named competitor of registration v3's C8 (docs/method.md §5c); its rows
#: follow every other estimator's, so the other rows are as they were
FRONTIER_OPT_IN = ("floor",)
