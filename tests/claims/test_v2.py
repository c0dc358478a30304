"""Registration v2 (docs/method.md §5b): its theory solved by hand, and each claim shown passing on
a world that reproduces, failing on a fabricated broken one, and refusing to decide on too few
cases or with an estimator that cannot be exact on the grid."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from fabricate import fabricate, tail_energy, teacher_spectrum
from hypothesis import given
from hypothesis import strategies as st

from entropic_bound.claims import theory
from entropic_bound.claims.registry import CLAIMS_V2
from entropic_bound.claims.verdict import (
    ILL_POSED,
    INSUFFICIENT,
    NOT_REPRODUCED,
    REPRODUCED,
    Check,
    verdict_of,
)

REPO = Path(__file__).resolve().parents[2]
SEEDS = (0, 1, 2, 3)  # 4 task seeds × r* ∈ {1, 2, 4}: 12 tasks a rung, above the 10-case floor


@pytest.fixture(scope="module")
def claims() -> dict:
    from entropic_bound.config.load import load_config

    return load_config(REPO / "config" / "claims.yaml", schema="claims")


@pytest.fixture(scope="module")
def run() -> dict:
    """The grid the fabricated world stands for (r* ∈ {1, 2, 4}, κ = 2, d = n = 8)."""
    return {
        "task": {"r_star": [1, 2, 4], "kappa": 2.0, "n": 8, "d": 8, "n_train": 4096},
        "frontier": {"r_star": [1, 2, 4], "kappa": 2.0, "gain": 1.0},
    }


def fabricated_bounds(metrics: pd.DataFrame) -> pd.DataFrame:
    """The fabricated world's class bounds: every class's bound is its tail energy (the students
    of fabricate.py sit at 1.03× it below r*)."""
    tasks = metrics[["task_id", "rung", "r_star", "task_seed"]].drop_duplicates()
    rows = [
        {**t, "rank": r, "R_bound": tail_energy(teacher_spectrum(t["r_star"]), r)}
        for t in tasks.to_dict("records")
        for r in range(1, t["r_star"])
    ]
    return pd.DataFrame(rows).assign(grad_norm=0.0, iterations=0, method="fabricated")


def world(broken=(), seeds=SEEDS) -> dict:
    tables = fabricate(broken=broken, task_seeds=seeds)
    tables["bounds"] = fabricated_bounds(tables["train_metrics"])
    return tables


# ---------------------------------------------------------------- theory by hand


def test_true_tail_by_hand():
    # s = (1, 0.5): the last component holds 0.25 / 1.25 = 0.2 of the energy
    assert theory.true_tail(2, 2.0) == pytest.approx(0.2)
    assert theory.true_tail(1, 2.0) == 1.0


def test_admission_by_hand():
    # r* = 32, κ = 2: s = linspace(1, 0.5, 32), Σ s² = 18.67..., last share 0.0134
    tail = theory.true_tail(32, 2.0)
    assert tail == pytest.approx(0.25 / np.sum(np.linspace(1, 0.5, 32) ** 2))
    assert 0.0133 < tail < 0.0135
    bad = theory.admission("energy_0.99", [1, 32], 2.0, 3.0, "task")  # 0.0134 < 3·0.01
    assert bad is not None and bad.status == ILL_POSED and "r* = 32" in bad.measured
    assert theory.admission("energy_0.999", [1, 32], 2.0, 3.0, "task") is None  # ≥ 0.003
    assert theory.admission("stable", [1, 500], 2.0, 3.0, "task") is None  # no parameter


@given(st.integers(1, 200), st.floats(1.01, 10.0))
def test_the_energy_rank_of_the_true_spectrum_is_r_star_when_admitted(r_star, kappa):
    """Admission is sufficient: wherever it admits r_E(τ), r_E(τ) of the true spectrum is r*."""
    from entropic_bound.core.estimators import energy_rank

    s = np.linspace(1.0, 1.0 / kappa, r_star)
    for tau in (0.9, 0.99, 0.999):
        if theory.admission(f"energy_{tau}", [r_star], kappa, 1.0, "t") is None:
            assert int(energy_rank(s[None, :], tau)[0]) == r_star


def test_epsilon_task_by_hand():
    curves = pd.DataFrame({"task_id": ["a", "b", "c"], "r_star": [1, 2, 3]})
    bounds = pd.DataFrame({"task_id": ["b", "c"], "rank": [1, 2], "R_bound": [0.2, 1.2e-3]})
    v2 = {"epsilon": 1e-3, "epsilon_task_factor": 0.5}
    eps = theory.epsilon_task(curves, bounds, v2)
    assert eps == {"a": 1e-3, "b": 1e-3, "c": pytest.approx(6e-4)}


def test_counted_states_its_denominator_and_refuses_few_cases():
    v2 = {"min_cases": 10, "float_slack": 1e-12}
    few = theory.counted(pd.Series([True] * 9), 0.9, v2, "x", "q")
    assert few.passed is None and few.status == INSUFFICIENT and "9/9" in few.measured
    nan = theory.counted(pd.Series([True] * 9 + [np.nan]), 1.0, v2, "x", "q")
    assert nan.passed is False  # a NaN counts against
    assert theory.counted(pd.Series([False] * 10), 0.25, v2, "x", "q", at_most=True).passed


def test_a_student_that_beats_its_bound_is_reported_not_believed():
    curves = pd.DataFrame(
        {
            "task_id": ["t"] * 2,
            "rung": ["L4"] * 2,
            "r_star": [3] * 2,
            "task_seed": [0] * 2,
            "student_class": ["L4"] * 2,
            "static_student": [False] * 2,
            "rank": [1, 2],
            "R": [0.5, 0.08],
            "R_theory": [0.6, 0.2],
        }
    )
    bounds = pd.DataFrame({"task_id": ["t", "t"], "rank": [1, 2], "R_bound": [0.5, 0.1]})
    out = theory.with_bounds(curves, bounds, 0.01)
    assert list(out["beaten"]) == [False, True]
    assert list(out["bound"]) == [0.5, 0.1]


def test_verdict_order():
    ok, fail = Check(True, ""), Check(False, "")
    few, ill = Check(None, "", INSUFFICIENT), Check(None, "", ILL_POSED)
    assert verdict_of([ok, fail, ill]) == NOT_REPRODUCED
    assert verdict_of([ok, few, ill]) == ILL_POSED
    assert verdict_of([ok, few]) == INSUFFICIENT
    assert verdict_of([ok, Check(None, "")]) == "missing input"
    assert verdict_of([ok]) == REPRODUCED


# ---------------------------------------------------------------- the claims


@pytest.mark.parametrize("cid", ["C1", "C2", "C3", "C5", "C7"])
def test_v2_reproduces_on_a_reproducing_world(cid, claims, run):
    row = CLAIMS_V2[cid](world(), claims, run)
    assert row["registration"] == "v2"
    assert row["verdict"] == REPRODUCED, row["measured"]
    assert np.isfinite(row["headline_value"]) and row["headline_n"] >= 10


@pytest.mark.parametrize("cid", ["C1", "C2", "C3", "C5", "C7"])
def test_v2_fails_on_a_broken_world(cid, claims, run):
    row = CLAIMS_V2[cid](world(broken={cid}), claims, run)
    assert row["verdict"] == NOT_REPRODUCED, row["measured"]


@pytest.mark.parametrize("cid", ["C1", "C2", "C3", "C7"])
def test_v2_says_insufficient_data_below_ten_cases(cid, claims, run):
    row = CLAIMS_V2[cid](world(seeds=(0,)), claims, run)  # 3 tasks a rung
    assert row["verdict"] == INSUFFICIENT, row["measured"]


@pytest.mark.parametrize("cid", ["C3", "C4", "C5", "C6"])
def test_v2_refuses_an_estimator_ill_posed_on_the_grid(cid, claims, run):
    big = copy.deepcopy(run)
    big["task"]["r_star"] = [1, 2, 4, 400]  # κ = 2: the last of 400 components holds < 0.1 %
    row = CLAIMS_V2[cid](world(), claims, big)
    assert row["verdict"] == ILL_POSED, row["measured"]


def test_c4_noise_is_not_judged_below_the_data_budget(claims, run):
    small = copy.deepcopy(run)
    small["task"]["n_train"] = 4 * 8 * 8 - 1
    row = CLAIMS_V2["C4"](world(), claims, small)
    assert "B = 255 < 4·n·d = 256" in row["measured"]
    assert row["verdict"] != REPRODUCED


def test_c7_uses_the_class_bound_not_the_surrogate_tail(claims, run):
    """Students at 1.03× the tail are 0.03× a bound 30× higher: deficient under R*_c."""
    tables = world()
    b = tables["bounds"]
    b.loc[b["rung"] == "L4", "R_bound"] *= 30
    row = CLAIMS_V2["C7"](tables, claims, run)
    assert row["verdict"] == NOT_REPRODUCED and "L4: R ≥ 0.5·R*_c(r)" in row["measured"]


def test_c8_a_tie_is_not_a_win(claims, run):
    """Every estimator exact on every kernel: no distortion, no evidence."""
    tables = world()
    f = tables["frontier"]
    f = f[f["estimator"].isin(claims["v2"]["C8"]["estimators"])].copy()
    f["r_hat"] = f["r_star"].astype(float)
    tables["frontier"] = f
    row = CLAIMS_V2["C8"](tables, claims, run)
    assert row["verdict"] != REPRODUCED, row["measured"]


def test_v2_thresholds_are_registered_and_dated():
    text = (REPO / "config" / "claims.yaml").read_text()
    v2 = yaml.safe_load(text)["v2"]
    assert v2["registered"] == "2026-12-04"
    assert "Registration v2" in text and "registered 2026-12-04" in text
