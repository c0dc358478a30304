"""Frontier boundaries (exploratory): the log grid, the bisection, and curves that agree with
the frontier cell for cell; the two mechanism variants behave as their maths says."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from entropic_bound.core.estimators import estimate
from entropic_bound.frontier.boundaries import (
    COLUMNS,
    Curve,
    _curves_of_cell,
    boundaries_table,
    boundaries_tables,
    log_grid,
    noise_tolerance,
)
from entropic_bound.frontier.grid import (
    frontier_grid,
    frontier_inputs,
    frontier_kernel,
    qk_operator,
)
from entropic_bound.frontier.teachers import (
    TEACHER_COLUMNS,
    exact_through,
    sigma_of_index,
    teacher_rows,
)
from entropic_bound.predict.attention import attention_native_pinv, attention_native_spectrum
from entropic_bound.predict.inversion import predict_inversion
from entropic_bound.predict.static import predict_static

FCFG = {
    "classes": ["L3", "L4"],
    "value_maps": ["known", "unknown"],
    "n": [4, 8],
    "d": 4,
    "sigma": [0.0, 0.01, 0.1],
    "beta": [0.5, 2.0],
    "r_star": [1, 2],
    "seeds": [0, 1],
    "n_seqs": 64,
    "kappa": 2.0,
    "gain": 1.0,
}
BCFG = {
    "n": [4, 8],
    "n_seqs": [16, 64],
    "budget_n": [4],
    "budget_beta": [2.0],
    "sigma_min": 1e-4,
    "sigma_max": 10.0,
    "per_decade": 4,
}


def test_log_grid_by_hand():
    np.testing.assert_allclose(log_grid(0.01, 1.0, 1), [0.01, 0.1, 1.0])
    np.testing.assert_allclose(log_grid(1.0, 10.0, 2), [1.0, 10**0.5, 10.0])
    with pytest.raises(ValueError, match="0 < lo < hi"):
        log_grid(1.0, 0.5, 4)


def test_noise_tolerance_by_hand():
    step = [1.0] * 6 + [0.0] * 4  # passes up to index 5 of 10
    calls = []

    def rate(k):
        calls.append(k)
        return 1.0 if k < 0 else step[k]

    assert noise_tolerance(rate, 10, 0.5) == 5
    assert len(calls) <= 2 + math.ceil(math.log2(11))  # clean, top, then bisection
    assert noise_tolerance(lambda k: 0.4, 10, 0.5) == -1  # not even clean
    assert noise_tolerance(lambda k: 1.0 if k < 0 else 0.2, 10, 0.5) == -1  # below the grid
    assert noise_tolerance(lambda k: 0.96, 10, 0.95) == 10  # above the grid


@given(st.lists(st.floats(0, 1), min_size=1, max_size=40), st.sampled_from([0.5, 0.95]))
@settings(max_examples=200, deadline=None)
def test_bisection_equals_a_linear_scan_on_monotone_rates(values, q):
    rates = sorted(values, reverse=True)  # non-increasing in σ
    clean = 1.0

    def rate(k):
        return clean if k < 0 else rates[k]

    passing = [k for k, r in enumerate(rates) if r >= q]
    expected = len(rates) if len(passing) == len(rates) else (max(passing) if passing else -1)
    assert noise_tolerance(rate, len(rates), q) == expected


@given(
    st.lists(st.floats(0, 1), min_size=1, max_size=40),
    st.sampled_from([0.5, 0.95]),
    st.integers(-2, 45),
)
@settings(max_examples=300, deadline=None)
def test_a_started_search_finds_the_same_answer(values, q, start):
    """Any guess (passing, failing, off the grid) leads to the linear scan's answer."""
    rates = sorted(values, reverse=True)

    def rate(k):
        return 1.0 if k < 0 else rates[k]

    plain = noise_tolerance(rate, len(rates), q)
    assert noise_tolerance(rate, len(rates), q, start) == plain


def test_a_good_guess_saves_evaluations():
    rates = [1.0] * 30 + [0.0] * 30
    asked = []

    def rate(k):
        asked.append(k)
        return 1.0 if k < 0 else rates[k]

    assert noise_tolerance(rate, 60, 0.5, start=28) == 29
    assert len(asked) <= 5  # clean, the guess, 29, 30 (fails), done


@pytest.fixture(scope="module")
def curves():
    return {
        (c.key["predictor"], c.key["class"], c.key["value_map"], c.key["beta"]): c
        for c in _curves_of_cell(FCFG, 0, 4, 64, FCFG["beta"], "energy_0.99", 1e-3, 1e-12)
    }


def test_curves_agree_with_the_frontier_cell_for_cell(curves):
    """At the frontier's budget a curve's rate at each frontier σ is the frontier's rate."""
    f = frontier_grid({**FCFG, "n": [4]}, 0)
    f = f[f["estimator"] == "energy_0.99"]
    f = f.assign(exact=np.floor(f["r_hat"] + 0.5) == f["r_star"])
    checked = 0
    for (pred, cls, vm, beta), c in curves.items():
        if pred not in ("P_attn", "P_invert"):
            continue
        for sigma in FCFG["sigma"]:
            g = f[
                (f["predictor"] == pred)
                & (f["class"] == cls)
                & (f["value_map"] == vm)
                & np.isclose(f["sigma"], sigma)
            ]
            g = g[g["beta"].isna()] if np.isnan(beta) else g[np.isclose(g["beta"], beta)]
            assert len(g) == 4
            assert c.rate(sigma) == pytest.approx(g["exact"].mean())
            checked += 1
    assert checked >= 20


def test_linear_twin_is_exact_clean_and_tolerates_more_relative_noise(curves):
    for beta in FCFG["beta"]:
        twin = curves[("P_invert_linear", "L4lin", "known", beta)]
        assert twin.rate(0.0) == 1.0
        grid = log_grid(1e-4, 10.0, 4)
        tw = twin.boundaries(grid)[0]
        inv = curves[("P_invert", "L4", "known", beta)].boundaries(grid)[0]
        assert tw["sigma50_rel"] >= inv["sigma50_rel"]


def test_assuming_v_identity_on_unknown_values_is_not_exact(curves):
    """P̂ = Y X⁺ = M X V X⁺ is no probability matrix when V is not I: the inversion fails."""
    for beta in FCFG["beta"]:
        assert curves[("P_invert_V=I", "L4", "unknown", beta)].rate(0.0) < 1.0


def test_boundaries_table_columns_and_budget_sweep():
    t = boundaries_table(FCFG, BCFG, 0)
    assert list(t.columns) == COLUMNS
    main = t[t["frontier_budget"]]
    assert set(main["n"]) == {4, 8} and set(main["n_seqs"]) == {64}
    sweep = t[~t["frontier_budget"]]
    assert set(sweep["n"]) == {4} and set(sweep["n_seqs"]) == {16}
    assert sweep["sigma95"].isna().all()  # the budget sweep reports σ50 only
    assert set(sweep["beta"].dropna()) == {2.0}
    # P_invert needs n ≤ d: none at n = 8 > d = 4
    assert not ((t["n"] == 8) & t["predictor"].str.startswith("P_invert")).any()
    ok = t["rate_clean"] >= 0.5
    assert (t.loc[~ok, "sigma50"] == 0).all()
    assert (main["sigma95"] <= main["sigma50"]).all()
    np.testing.assert_allclose(t["sigma50_rel"], t["sigma50"] / t["clean_std"])
    assert isinstance(t, pd.DataFrame)


def test_boundaries_are_reproducible():
    a = boundaries_table(FCFG, {**BCFG, "n": [4], "n_seqs": []}, 0)
    b = boundaries_table(FCFG, {**BCFG, "n": [4], "n_seqs": []}, 0)
    pd.testing.assert_frame_equal(a, b)


def test_boundaries_report_progress_per_cell_without_changing_the_table():
    """Three (B, n) cells: B = 16 at budget_n's n = 4, then B = 64 at n = 4 and 8."""
    calls = []
    cfg = {**BCFG, "n_seqs": [16]}
    with_progress = boundaries_table(FCFG, cfg, 0, progress=lambda d, t: calls.append((d, t)))
    assert calls == [(0, 3), (1, 3), (2, 3), (3, 3)]
    pd.testing.assert_frame_equal(with_progress, boundaries_table(FCFG, cfg, 0))


def test_a_config_without_curves_gives_an_empty_table():
    t = boundaries_table(FCFG, {**BCFG, "n": [], "n_seqs": [], "budget_n": []}, 0)
    assert t.empty and list(t.columns) == COLUMNS


@pytest.mark.parametrize("p_attn_sigma", ["formed", "linear"])
def test_frontier_cells_equal_a_cell_by_cell_reference(p_attn_sigma):
    """The frontier shares work across cells (one noisy-copy buffer refilled per cell, P_invert's
    X⁺ once per (n, seed), with ``linear`` P_attn's X̃⁺E and its Gram matrix): every P_attn and
    P_static entropy rank equals the one computed from that cell alone with the public
    predictors (nothing of another cell or σ left over), and so does every P_invert rank."""
    cfg = {**FCFG, "n": [4], "n_seqs": 96, "p_attn_sigma": p_attn_sigma}
    n, d, B = 4, cfg["d"], cfg["n_seqs"]
    grid = frontier_grid(cfg, 0)
    grid = grid[grid["estimator"] == "entropy"].set_index(
        ["predictor", "class", "value_map", "beta", "r_star", "seed", "sigma"]
    )["r_hat"]
    checked = 0
    for seed in cfg["seeds"]:
        X, E, V_haar = frontier_inputs(0, n, seed, B, d)
        for r_star in cfg["r_star"]:
            A = frontier_kernel(cfg, 0, r_star, seed)
            for cls in cfg["classes"]:
                for beta in cfg["beta"] if cls == "L4" else [np.nan]:
                    M = qk_operator(cls, X @ A @ X.transpose(-1, -2), n, d, beta)
                    for vm in cfg["value_maps"]:
                        V = V_haar if vm == "unknown" else torch.eye(d, dtype=torch.float64)
                        for sigma in cfg["sigma"]:
                            Y = M @ X @ V + sigma * E
                            spec = attention_native_spectrum(attention_native_pinv(X), Y)
                            key = (cls, vm, beta, r_star, seed, sigma)
                            want = float(estimate(spec.numpy(), "entropy")[0])
                            assert grid[("P_attn", *key)] == pytest.approx(want, rel=1e-9)
                            st = predict_static(X, Y, softmax=cls == "L4")
                            want = float(estimate(st["spectrum"], "entropy")[0])
                            assert grid[("P_static", *key)] == pytest.approx(want, rel=1e-6)
                            if cls == "L4" and vm == "known":
                                inv = predict_inversion(X, Y)["spectrum"]
                                want = float(estimate(inv, "entropy")[0])
                                assert grid[("P_invert", *key)] == pytest.approx(want, rel=1e-6)
                            checked += 1
    assert checked == 2 * 2 * (1 + 2) * 2 * 3


# ---------------------------------------------------------------- X1_teachers: σ_exact per case


def _scan(exact: np.ndarray):
    """exact_through on a table ``exact[k + 1, g]`` (row 0: σ = 0), and the σ asked for."""
    asked = []

    def at(k):
        asked.append(k)
        return exact[k + 1]

    return exact_through(at, exact.shape[0] - 1), asked


def test_exact_through_by_hand():
    """Five cases on a grid of 4 σ: exact up to grid index 1; not exact clean (NaN); exact clean
    only (0); exact on the whole grid (inf); exact at 0 and 1 but not at 2, again at 3 (the
    first failure counts)."""
    T, F = True, False
    exact = np.array(
        [
            [T, F, T, T, T],  # σ = 0
            [T, T, F, T, T],  # grid 0
            [T, T, F, T, T],  # grid 1
            [F, F, F, T, F],  # grid 2
            [F, T, F, T, T],  # grid 3
        ]
    )
    last, asked = _scan(exact)
    assert last.tolist() == [1, -2, -1, 4, 1]
    assert asked == [-1, 0, 1, 2, 3]  # case 3 passes the whole grid: every σ is asked
    grid = np.array([0.1, 1.0, 10.0, 100.0])
    sig = [sigma_of_index(int(k), grid) for k in last]
    assert sig[0] == 1.0 and math.isnan(sig[1]) and sig[2] == 0.0 and sig[3] == math.inf


def test_exact_through_stops_once_every_case_has_failed():
    T, F = True, False
    exact = np.array([[T, T], [T, F], [F, F], [T, T], [T, T]])
    last, asked = _scan(exact)
    assert last.tolist() == [0, -1] and asked == [-1, 0, 1]
    none, asked = _scan(np.array([[F, F], [T, T]]))
    assert none.tolist() == [-2, -2] and asked == [-1]  # no case exact clean: σ = 0 only


def test_curve_teachers_reads_a_fake_spectrum():
    """A Curve whose spectrum_at gives case g rank 1 (one unit singular value) up to a σ set per
    case and rank 2 past it; r* = 1 for every case but the last (r* = 2: never exact)."""
    grid = log_grid(0.01, 1.0, 1)  # 0.01, 0.1, 1
    limits = [0.05, 0.0, 5.0, 0.005]  # the largest σ at which each case is still rank 1
    r_star = [1, 1, 1, 2]
    asked = []

    def spectrum_at(sigma):
        asked.append(sigma)
        rows = [[1.0, 0.0] if sigma <= lim else [1.0, 1.0] for lim in limits]
        return torch.tensor(rows, dtype=torch.float64)

    clean = torch.full((4, 1, 2, 2), 3.0)
    clean[0, 0, 0, 0] = 5.0  # std > 0
    c = Curve({"predictor": "P_invert"}, clean, r_star, spectrum_at, "numerical", 1e-3, [7] * 4)
    rows = teacher_rows(c, grid)
    assert [r["sigma_exact"] for r in rows[:3]] == [0.01, 0.0, math.inf]
    assert math.isnan(rows[3]["sigma_exact"])
    assert [r["r_star"] for r in rows] == r_star and {r["seed"] for r in rows} == {7}
    std = float(clean.std(unbiased=False))
    assert rows[0]["clean_std"] == std and rows[0]["sigma_exact_rel"] == 0.01 / std
    assert asked == [0.0, 0.01, 0.1, 1.0]  # case 2 is exact on the whole grid
    teacher_rows(c, grid)
    assert len(asked) == 4  # the spectra are cached


def test_boundaries_tables_add_x1_teachers_and_leave_x1_unchanged():
    """X1_boundaries from boundaries_tables is boundaries_table's, bitwise; X1_teachers has one
    row per case of P_invert and P_invert_linear at the frontier's B, n ≤ d, every β, and
    agrees with the curves' rates: a curve's clean rate is the share of cases exact clean."""
    x1, cases = boundaries_tables(FCFG, BCFG, 0)
    pd.testing.assert_frame_equal(x1, boundaries_table(FCFG, BCFG, 0), check_exact=True)
    assert list(cases.columns) == TEACHER_COLUMNS
    G = len(FCFG["r_star"]) * len(FCFG["seeds"])
    assert len(cases) == 2 * len(FCFG["beta"]) * G  # n = 4 only: n = 8 > d
    assert set(cases["predictor"]) == {"P_invert", "P_invert_linear"}
    assert set(cases["n"]) == {4} and set(cases["n_seqs"]) == {FCFG["n_seqs"]}
    assert set(cases["value_map"]) == {"known"}
    assert set(zip(cases["predictor"], cases["class"])) == {
        ("P_invert", "L4"),
        ("P_invert_linear", "L4lin"),
    }
    main = x1[x1["frontier_budget"]]
    for (pred, beta), g in cases.groupby(["predictor", "beta"]):
        (i,) = np.flatnonzero((main["predictor"] == pred) & (main["beta"] == beta))
        row = main.iloc[i]
        assert g["clean_std"].eq(row["clean_std"]).all()
        assert np.mean(g["sigma_exact"].notna()) == row["rate_clean"]
    np.testing.assert_allclose(cases["sigma_exact_rel"], cases["sigma_exact"] / cases["clean_std"])
    assert sorted(cases[cases["predictor"] == "P_invert"]["seed"].unique()) == FCFG["seeds"]


def test_x1_teachers_bound_the_curves_rate():
    """At a grid σ no larger than the least σ_exact of a curve's cases, every case is exact, so
    the rate there is 1: σ95 is at least the least σ_exact (when every case is exact clean)."""
    x1, cases = boundaries_tables(FCFG, {**BCFG, "n_seqs": []}, 0)
    for (pred, beta), g in cases.groupby(["predictor", "beta"]):
        least = g["sigma_exact"].min()
        if g["sigma_exact"].notna().all() and np.isfinite(least) and least > 0:
            (i,) = np.flatnonzero((x1["predictor"] == pred) & (x1["beta"] == beta))
            assert x1["sigma95"].iloc[i] >= least
