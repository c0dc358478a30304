"""Verdict by scale: headline numbers on hand-built tables, margins, the scale list, the table."""

import math

import pandas as pd
import pytest
import yaml

from entropic_bound.exploratory.scale import (
    Headline,
    figure_scale,
    headlines,
    scale_markdown,
    verdict_by_scale,
)

CLAIMS = yaml.safe_load(open("config/claims.yaml"))


def _tables(broken: str | None = None) -> dict[str, pd.DataFrame]:
    """A tiny run: one L0 task with r* = 2 (and one L3, L4 task), every headline known by hand."""
    ratio = 0.25 if broken == "C1" else 0.8  # R/R* at r = 1
    risk = pd.DataFrame(
        {
            "rung": ["L0", "L0", "L0", "L4"],
            "student_class": ["L0", "L0", "L0", "L4"],
            "static_student": [False, False, True, False],
            "r_star": [2, 2, 2, 2],
            "rank": [1, 2, 16, 1],
            "R": [0.2 * ratio, 5e-4, 0.0, 0.01],
            "R_theory": [0.2, 0.0, 0.0, 0.2],
        }
    )
    learned = pd.DataFrame(
        {
            "rung": ["L0"] * 4,
            "r_star": [2] * 4,
            "estimator": ["energy_0.99"] * 3 + ["stable"],
            "r_hat": [2, 2, 3, 9],  # 2/3 exact under r_E(0.99)
        }
    )
    dop = pd.DataFrame(
        {
            "class": ["L0", "L0", "L3", "L4", "L4"],
            "sigma": [0.0, 0.05, 0.0, 0.0, 0.0],
            "predictor": ["P_static"] * 4 + ["P_attn"],
            "estimator": ["energy_0.99"] * 5,
            "r_star": [2, 2, 2, 2, 2],
            # L0 exact, clean and noisy; L3 matches, L4 does not: mismatch 1/2
            "r_hat": [2, 5 if broken == "C4" else 2, 2, 7, 2],
        }
    )
    t2 = pd.DataFrame(
        {
            "rung": ["L0", "L1", "L2", "L4", "L4"],
            "sigma": [0.0] * 5,
            "r_star": [2] * 5,
            "P_static": [2, 2, 3, 5, 5],
            "r_emp": [2, 2, 2, 2, 2 if broken != "C7" else 4],
        }
    )
    t3 = pd.DataFrame(
        {
            "kernels": ["learned (full-rank student)", "data-only P_attn"],
            "rung": ["L4", "L4"],
            "estimator": ["energy_0.99"] * 2,
            "exact_rate": [0.95, 0.1],
        }
    )
    t4 = pd.DataFrame(
        {
            "predictor": ["P_invert"] * 3,
            "estimator": ["energy_0.99"] * 3,
            "sigma": [0.01, 0.01, 0.01],
            "beta": [1.0, 2.0, 4.0],  # β = 4 is outside the claim's β ≤ 2
            "n_cases": [10, 30, 50],
            "exact_rate": [0.2, 0.6, 1.0],
        }
    )
    claims = pd.DataFrame({"claim": [f"C{i}" for i in range(1, 10)], "verdict": ["reproduced"] * 9})
    return {
        "claims": claims,
        "risk_curves": risk,
        "learned_ranks": learned,
        "data_only_predictions": dop,
        "T2_intrinsic_ranks": t2,
        "T3_estimators": t3,
        "T4_frontier": t4,
    }


def test_headlines_by_hand():
    h = headlines(_tables(), CLAIMS)
    assert h["C1"].value == pytest.approx(0.8)
    assert h["C1"].margin == pytest.approx(0.8 / 0.5 - 1)
    assert h["C2"].value == pytest.approx(5e-4) and h["C2"].margin == pytest.approx(0.5)
    assert h["C3"].value == pytest.approx(2 / 3)
    assert h["C4"].value == 1.0 and h["C4"].margin == pytest.approx(1 / 0.9 - 1)  # σ = 0.05
    assert h["C5"].value == pytest.approx(0.5)
    assert h["C6"].value == pytest.approx(2 / 3)
    assert h["C7"].value == 1.0
    assert h["C8"].value == pytest.approx(0.95)
    # cases-weighted over β ≤ 2 only: (0.2·10 + 0.6·30) / 40 = 0.5, at the ≤ 0.5 threshold
    assert h["C9"].value == pytest.approx(0.5) and h["C9"].margin == pytest.approx(0.0)


@pytest.mark.parametrize("broken", ["C1", "C4", "C7"])
def test_a_failing_headline_has_a_negative_margin(broken):
    assert headlines(_tables(), CLAIMS)[broken].margin > -1e-12
    h = headlines(_tables(broken), CLAIMS)[broken]
    assert h.margin < 0
    if broken == "C1":
        assert h.margin == pytest.approx(0.25 / 0.5 - 1)


def test_margin_sense_and_nan():
    assert Headline("x", 2.0, ">=", 4.0).margin == -0.5
    assert Headline("x", 2.0, "<=", 4.0).margin == 0.5
    assert math.isnan(Headline("x", float("nan"), ">=", 1.0).margin)


def test_table_markdown_and_figure():
    runs = {8: _tables("C1"), 16: _tables()}
    table = verdict_by_scale(runs, CLAIMS)
    assert len(table) == 18 and list(table["d"].unique()) == [8, 16]
    md = scale_markdown(table)
    assert (
        "exploratory" in md and "| C1 | L0 min R/R* over r < r* | ✓ 0.25 | ✓ 0.8 | >= 0.5 |" in md
    )
    fig = figure_scale(table)
    assert fig.axes[0].get_xlabel().startswith("d = n")
