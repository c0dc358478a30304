"""The null guesses an estimator of the knee must beat (docs/method.md §9, "Null
baselines"), by hand."""

import math

import numpy as np
import pandas as pd
import pytest

from entropic_bound.heads.baselines import null_guesses, paired


def test_leave_one_out_median_and_layer_mean_by_hand():
    t = pd.DataFrame(
        {
            "model": ["m"] * 5 + ["n"] * 2,
            "layer": [0, 0, 1, 1, 1, 0, 0],
            "knee": [4.0, 6.0, 5.0, 7.0, math.nan, 10.0, 12.0],
        }
    )
    g = null_guesses(t, "model")
    # model m: others of head 0 are (6, 5, 7) -> 6; of head 1 (4, 5, 7) -> 5; of head 2
    # (4, 6, 7) -> 6; of head 3 (4, 6, 5) -> 5; of head 4 (no knee) all four -> 5.5;
    # model n: each the other's knee
    assert g["loo_median"].tolist() == [6.0, 5.0, 6.0, 5.0, 5.5, 12.0, 10.0]
    # layer means: (m, 0): the other of the pair; (m, 1): the others with a knee
    assert g["layer_mean"].tolist() == [6.0, 4.0, 7.0, 5.0, 6.0, 12.0, 10.0]
    # one model when no model column is named
    assert null_guesses(t.drop(columns="model").iloc[:2])["loo_median"].tolist() == [6.0, 4.0]


def test_a_lone_head_has_no_guess():
    t = pd.DataFrame({"layer": [0, 1], "knee": [3.0, math.nan]})
    g = null_guesses(t)
    assert math.isnan(g["loo_median"][1]) is False and g["loo_median"][1] == 3.0
    assert math.isnan(g["loo_median"][0]) and math.isnan(g["layer_mean"][0])


def test_paired_by_hand():
    knee = [4, 5, 6, 7, np.nan]
    est = [4, 5, 8, 7, 1]  # errors 0, 0, 2, 0
    guess = [6, 6, 6, 6, 6]  # errors 2, 1, 0, 1
    p = paired(est, guess, knee)
    assert p["heads"] == 4 and p["mae"] == 0.5 and p["mae_null"] == 1.0
    assert (p["wins"], p["losses"], p["ties"]) == (3, 1, 0)
    assert p["mae_diff"] == pytest.approx(0.5)
    assert p["p_sign"] == pytest.approx(5 / 16)  # P(X ≥ 3), X ~ Bin(4, ½)
    # d = (2, 1, −2, 1): ranks of |d| 3.5, 1.5, 3.5, 1.5; W⁺ = 6.5 of 10
    assert p["p_wilcoxon"] == pytest.approx(6 / 16)
