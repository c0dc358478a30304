"""C8 by β (exploratory) and the 'Beyond the verdicts' lines: hand-solved tables."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from entropic_bound.exploratory.beyond import HEADER, beyond_the_verdicts, c8_beta_lines
from entropic_bound.exploratory.c8_by_beta import (
    DATA_ONLY,
    LEARNED,
    estimators_by_beta,
    tasks_at_beta,
)
from entropic_bound.tasks.make import make_task, task_specs

ESTS = ["numerical", "energy_0.9", "energy_0.99"]


def _learned() -> pd.DataFrame:
    """Two full-rank L4 students (r* = 1) per β: at β = 2 one keeps 5 % of its energy in a
    second component (r_E(0.99) = 2, r_E(0.9) = 1)."""
    rows = []
    for beta in (1.0, 2.0):
        for seed in (0, 1):
            tail = 0.23 if (beta == 2.0 and seed == 0) else 0.0
            rows.append(
                {
                    "task_id": "L4_r1_s0",
                    "rung": "L4",
                    "r_star": 1,
                    "task_seed": 0,
                    "student_class": "L4",
                    "static_student": False,
                    "rank": 3,
                    "seed": seed,
                    "R": 1e-4,
                    "R_theory": 0.0,
                    "converged": True,
                    "spectrum": [1.0, tail, 0.0],
                    "beta": beta,
                }
            )
    return pd.DataFrame(rows)


def _frontier() -> pd.DataFrame:
    rows = []
    for beta in (1.0, 2.0):
        for est, r_hat in zip(ESTS, (3.0, 1.0, 2.0)):
            for n in (4, 8):
                rows.append(
                    {
                        "class": "L4",
                        "value_map": "unknown",
                        "n": n,
                        "d": 4,
                        "sigma": 0.0,
                        "beta": beta,
                        "r_star": 1,
                        "seed": 0,
                        "predictor": "P_attn",
                        "estimator": est,
                        "r_hat": r_hat + (n == 8),  # n = 8 is not the task's n: ignored
                    }
                )
    return pd.DataFrame(rows)


def test_estimators_by_beta_by_hand():
    t = estimators_by_beta(_learned(), _frontier(), [1.0, 2.0], ESTS, n_tokens=4, tol=1e-3)
    key = t.set_index(["kernels", "beta", "estimator"])
    assert key.loc[(LEARNED, 1.0, "energy_0.99"), "exact_rate"] == 1.0
    assert key.loc[(LEARNED, 2.0, "energy_0.99"), "exact_rate"] == 0.5
    assert key.loc[(LEARNED, 2.0, "energy_0.99"), "mean_abs_error"] == 0.5
    assert key.loc[(LEARNED, 2.0, "energy_0.9"), "mean_abs_error"] == 0.0
    assert key.loc[(LEARNED, 2.0, "numerical"), "mean_abs_error"] == 0.5
    assert key.loc[(DATA_ONLY, 1.0, "numerical"), "mean_abs_error"] == 2.0
    assert key.loc[(DATA_ONLY, 2.0, "energy_0.9"), "exact_rate"] == 1.0
    assert (key.xs(DATA_ONLY)["n"] == 1).all()


def test_estimators_by_beta_reports_progress_per_beta():
    calls = []
    t = estimators_by_beta(
        _learned(),
        _frontier(),
        [1.0, 2.0],
        ESTS,
        n_tokens=4,
        tol=1e-3,
        progress=lambda d, n: calls.append((d, n)),
    )
    assert calls == [(0, 2), (1, 2), (2, 2)]
    ref = estimators_by_beta(_learned(), _frontier(), [1.0, 2.0], ESTS, n_tokens=4, tol=1e-3)
    pd.testing.assert_frame_equal(t, ref)


def test_estimators_by_beta_without_inputs_is_empty():
    t = estimators_by_beta(None, None, [1.0], ESTS, n_tokens=4, tol=1e-3)
    assert t.empty and list(t.columns)[0] == "kernels"


def test_tasks_at_beta_change_only_the_temperature():
    cfg = {
        "seed": 0,
        "task": {
            "n": 4,
            "d": 4,
            "gain": 1.0,
            "kappa": 2.0,
            "beta": 1.0,
            "sigma": 0.0,
            "value_map": "unknown",
            "n_train": 8,
            "n_test": 4,
            "r_star": [1],
            "seeds": [0],
            "rungs": ["L0", "L4"],
            "lambdas": [],
        },
    }
    ((a1, m1),) = tasks_at_beta(cfg, "L4", 1.0)
    ((a2, m2),) = tasks_at_beta(cfg, "L4", 2.0)
    paper = make_task([s for s in task_specs(cfg) if s.rung == "L4"][0])
    np.testing.assert_array_equal(a1["Y_train"], paper["Y_train"])  # β = 1: the paper's task
    np.testing.assert_array_equal(a1["X_train"], a2["X_train"])
    np.testing.assert_array_equal(a1["kernel"], a2["kernel"])
    assert not np.array_equal(a1["Y_train"], a2["Y_train"])
    assert (m1["beta"], m2["beta"]) == (1.0, 2.0)
    assert dataclasses.is_dataclass(task_specs(cfg)[0])


def test_beyond_lines_quote_the_numbers():
    t = estimators_by_beta(_learned(), _frontier(), [1.0, 2.0], ESTS, n_tokens=4, tol=1e-3)
    lines = c8_beta_lines(t, "energy_0.99")
    assert len(lines) == 2
    assert "β = 2: 0.5 (50% exact), best other r_E(0.9) 0" in lines[0]
    text = beyond_the_verdicts(None, t, "energy_0.99")
    assert text.startswith(HEADER)
    assert "frontier boundaries: not computed" in text


@pytest.mark.parametrize("empty", [None, pd.DataFrame()])
def test_beyond_without_tables_says_so(empty):
    assert "not computed" in beyond_the_verdicts(empty, empty, "energy_0.99")


def test_no_beta_trains_nothing():
    from entropic_bound.exploratory.c8_by_beta import train_full_rank_by_beta

    t = train_full_rank_by_beta({"train": {}, "task": {"n": 4, "d": 4}}, [])
    assert t.empty and "beta" in t.columns
