"""C8_distortion (train/distortion.py): the L3 and L4 targets of a teacher share A, V and X, the
noise is sigma_rel × each target's clean std, the budget is budget_factor · n · d, and the table
is bitwise reproducible."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from entropic_bound.analysis.columns import METRICS_COLUMNS
from entropic_bound.config.load import load_config
from entropic_bound.tasks.grid import TaskSpec
from entropic_bound.tasks.make import make_task
from entropic_bound.train.distortion import (
    DEFAULT_CONDITIONS,
    ENGINE_COLUMNS,
    EXTRA_COLUMNS,
    SHARED,
    budget,
    distortion_conditions,
    distortion_table,
    target,
    unit_noise,
)

REPO = Path(__file__).resolve().parents[2]
SPEC = TaskSpec(rung="L4", r_star=2, seed=1, n=4, d=4, n_train=96, n_test=32, base_seed=3)
CONDITIONS = {"betas": [1.0, 4.0], "sigma_rel": 0.1, "budget_factor": 2}


def test_conditions_from_the_v4_section_or_the_defaults_when_it_is_absent():
    assert distortion_conditions({"v3": {}}) == DEFAULT_CONDITIONS
    v4 = {"v4": {"C8": {"conditions": {"betas": [2, 8], "sigma_rel": 0.2, "budget_factor": 4}}}}
    assert distortion_conditions(v4) == {"betas": [2.0, 8.0], "sigma_rel": 0.2, "budget_factor": 4}
    with pytest.raises(ValueError, match="v4.C8.conditions"):
        distortion_conditions({"v4": {"C1": {}}})  # a v4 section without C8: no defaults
    with pytest.raises(ValueError, match="v4.C8.conditions"):
        distortion_conditions({"v4": {"C8": {"conditions": {"betas": [1.0], "sigma_rel": 0.1}}}})
    with pytest.raises(ValueError, match="budget_factor"):
        distortion_conditions({"v4": {"C8": {"conditions": {**CONDITIONS, "budget_factor": 0}}}})


def test_budget_is_budget_factor_n_d_sequences():
    assert budget(4, 4, 2, 96) == 32 and budget(16, 16, 1, 4096) == 256
    assert budget(4, 4, 0.5, 96) == 8
    for factor in (0.03, 7):  # 0.48 sequences; 112 > 96
        with pytest.raises(ValueError, match="whole number"):
            budget(4, 4, factor, 96)


def test_l3_and_l4_targets_share_the_teachers_a_v_and_x():
    l4 = target(SPEC, 1.0, CONDITIONS)
    hot = target(SPEC, 4.0, CONDITIONS)
    l3 = target(SPEC, "L3", CONDITIONS)
    for name in ("kernel", "V", "X_train", "X_test"):
        np.testing.assert_array_equal(l3[0][name], l4[0][name])
        np.testing.assert_array_equal(hot[0][name], l4[0][name])
    assert set(SHARED) == {"kernel", "V", "X_train", "X_test"}
    assert l3[3] == l4[3] == hot[3]  # the digest the table checks
    assert l3[1]["class"] == "L3" and l4[1]["class"] == "L4"
    assert (l3[1]["beta"], l4[1]["beta"], hot[1]["beta"]) == (1.0, 1.0, 4.0)
    assert not np.array_equal(l3[0]["Y_train"], l4[0]["Y_train"])  # only the operator differs
    # and they are the task's own: the first B sequences of the L4 task of the grid
    np.testing.assert_array_equal(l4[0]["X_train"], make_task(SPEC)["X_train"][:32])


def test_noise_is_sigma_rel_times_each_targets_clean_std_on_both_splits():
    B = budget(SPEC.n, SPEC.d, CONDITIONS["budget_factor"], SPEC.n_train)
    E_train, E_test = unit_noise(SPEC, B)
    for kind in (1.0, 4.0, "L3"):
        rung_beta = {"rung": "L3"} if kind == "L3" else {"beta": kind}
        clean = make_task(dataclasses.replace(SPEC, **rung_beta))
        arrays, meta, sigma, _ = target(SPEC, kind, CONDITIONS)
        std = clean["Y_train"][:B].astype(np.float64).std()
        assert sigma == 0.1 * std and meta["sigma"] == sigma > 0
        noise = arrays["Y_train"].astype(np.float64) - clean["Y_train"][:B]
        np.testing.assert_allclose(noise, sigma * E_train, atol=1e-6)
        noise = arrays["Y_test"].astype(np.float64) - clean["Y_test"]
        np.testing.assert_allclose(noise, sigma * E_test, atol=1e-6)
    # σ_rel = 0: the clean task, bitwise
    arrays, meta, sigma, _ = target(SPEC, 1.0, {**CONDITIONS, "sigma_rel": 0.0})
    assert sigma == 0.0
    np.testing.assert_array_equal(arrays["Y_train"], make_task(SPEC)["Y_train"][:B])


def test_budget_and_test_split():
    arrays, meta, _, _ = target(SPEC, "L3", {**CONDITIONS, "budget_factor": 1})
    assert arrays["X_train"].shape == arrays["Y_train"].shape == (16, 4, 4)
    assert meta["n_train"] == 16
    assert arrays["X_test"].shape == (SPEC.n_test, 4, 4)  # the task's whole test split
    assert arrays["X_train"].base is None  # a copy: the task's whole split is not held


def tiny_config() -> dict:
    """config/quick.yaml cut down: d = n = 4, two L4 teachers, two student seeds, 60 steps."""
    cfg = load_config(REPO / "config" / "quick.yaml")
    cfg["task"].update(n=4, d=4, r_star=[1, 2], seeds=[0], n_train=64, n_test=32)
    cfg["task"].update(rungs=["L3", "L4"], lambdas=[])
    cfg["train"]["student_seeds"] = [0, 1]
    cfg["train"]["classes"]["default"].update(max_steps=60, eval_every=20, batch=16)
    cfg["train"]["backend"] = "fused"
    cfg["device"] = "cpu"
    return cfg


def test_table_columns_rows_and_bitwise_reproducible():
    cfg = tiny_config()
    calls = []
    a = distortion_table(cfg, CONDITIONS, progress=lambda d, t: calls.append((d, t)))
    b = distortion_table(cfg, CONDITIONS)
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    assert calls == [(1, 3), (2, 3), (3, 3)]  # two β, then L3
    assert list(a.columns) == [*ENGINE_COLUMNS, *EXTRA_COLUMNS]  # the engine's row, then ours
    assert set(METRICS_COLUMNS) <= set(a.columns)
    # one row per (teacher, target, student seed): 2 teachers × (2 β + L3) × 2 seeds
    assert len(a) == 12
    assert not a.duplicated(["teacher", "rung", "beta", "seed"]).any()
    assert set(a["teacher"]) == {"L4_r1_s0", "L4_r2_s0"}
    l3 = a[a["rung"] == "L3"]
    assert len(l3) == 4 and l3["beta"].isna().all() and (l3["student_class"] == "L3").all()
    assert set(l3["task_id"]) == {"L3_r1_s0", "L3_r2_s0"}
    assert sorted(a.loc[a["rung"] == "L4", "beta"].unique()) == [1.0, 4.0]
    assert (a["rank"] == 4).all() and (a["n_train"] == 32).all() and (a["sigma_rel"] == 0.1).all()
    assert a["spectrum"].map(len).eq(4).all()
    # every row's σ is its own target's: one σ per (teacher, target), the same for both seeds
    assert (a.groupby(["teacher", "rung", "beta"], dropna=False)["sigma"].nunique() == 1).all()
    spec = TaskSpec(rung="L4", r_star=2, seed=0, n=4, d=4, n_train=64, n_test=32)
    row = a[(a["teacher"] == "L4_r2_s0") & (a["beta"] == 4.0)].iloc[0]
    assert row["sigma"] == target(dataclasses.replace(spec, beta=4.0), 4.0, CONDITIONS)[2]
    assert np.isfinite(a["R"]).all()


def test_a_grid_without_l4_gives_an_empty_table():
    cfg = tiny_config()
    cfg["task"]["rungs"] = ["L3"]
    t = distortion_table(cfg, CONDITIONS)
    assert t.empty and list(t.columns) == [*ENGINE_COLUMNS, *EXTRA_COLUMNS]
