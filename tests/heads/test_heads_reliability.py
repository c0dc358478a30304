"""The knee's reliability (docs/method.md §9, "The knee's reliability"): split halves and the
bootstrap over knee windows, on per-window losses solved by hand."""

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from entropic_bound.heads.knees import knee_of
from entropic_bound.heads.reliability import (
    bootstrap_weights,
    head_reliability,
    knees_from_means,
    reliability,
)

#: four windows: the full model at 1, the ablated head at 2 (gap 1, threshold 0.01); L(2) is
#: within 0.01 of the full loss on windows 0, 2, 3 and 0.02 above it on window 1
CURVE = np.array(
    [
        [2.0, 2.0, 2.0, 2.0],  # L(0)
        [1.5, 1.5, 1.5, 1.5],  # L(1)
        [1.005, 1.02, 1.005, 1.005],  # L(2): mean 1.00875
        [1.0, 1.0, 1.0, 1.0],  # L(3) = the full model
    ]
)
ABLATED = np.array([2.0, 2.0, 2.0, 2.0])


def test_split_halves_and_bootstrap_by_hand():
    # resamples: window 0 alone (knee 2), window 1 alone (3), all four (2)
    weights = np.array([[1.0, 0, 0, 0], [0, 1.0, 0, 0], [0.25] * 4])
    r = head_reliability(CURVE, ABLATED, 0.01, weights, level=0.9, halfwidth=1)
    assert r["knee"] == 2
    assert (r["knee_half_a"], r["knee_half_b"]) == (2, 3)  # windows 0, 2 | 1, 3 (mean 1.0125)
    assert (r["knee_boot_lo"], r["knee_boot_hi"]) == (2, 3)
    assert r["knee_boot_share"] == pytest.approx(2 / 3)
    assert r["knee_slack"] == pytest.approx(0.01 - 0.00875)
    assert r["knee_resolved"]
    # within knee ± 0 it is not resolved: a resample gives 3
    assert not head_reliability(CURVE, ABLATED, 0.01, weights, 0.9, halfwidth=0)["knee_resolved"]


def test_a_resample_without_a_gap_leaves_the_knee_unresolved():
    ablated = ABLATED.copy()
    ablated[3] = 1.0  # window 3 alone: ablating costs nothing there
    weights = np.array([[1.0, 0, 0, 0], [0, 0, 0, 1.0], [0.25] * 4])
    r = head_reliability(CURVE, ablated, 0.01, weights, level=0.9)
    assert r["knee"] == 3  # gap 0.75 over all four: 0.00875 > 0.0075
    assert math.isnan(r["knee_boot_hi"]) and not r["knee_resolved"]


def test_a_head_without_a_knee():
    r = head_reliability(CURVE, np.ones(4), 0.01, bootstrap_weights(4, 50, 0))
    assert math.isnan(r["knee"]) and math.isnan(r["knee_slack"]) and not r["knee_resolved"]


def test_bootstrap_weights_are_seeded_resamples():
    w = bootstrap_weights(5, 200, seed=3)
    assert w.shape == (200, 5) and np.allclose(w.sum(1), 1.0)
    assert np.array_equal(w, bootstrap_weights(5, 200, seed=3))
    assert not np.array_equal(w, bootstrap_weights(5, 200, seed=4))
    assert np.allclose(w * 5, np.round(w * 5))  # counts over N


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.floats(0, 3), min_size=1, max_size=12),
    st.floats(-0.5, 3),
    st.floats(0.001, 0.5),
)
def test_the_batched_rule_is_the_rule(extra, gap, fraction):
    means = np.array([1.0 + e for e in extra] + [1.0])
    got = float(knees_from_means(means, np.asarray(1.0 + gap), fraction))
    want = knee_of(means, 1.0, 1.0 + gap, fraction)
    assert got == want or (math.isnan(got) and math.isnan(want))


def test_the_table_of_a_model_reads_every_head():
    frames = []
    for head, shift in ((0, 0.0), (1, 0.5)):
        f = pd.DataFrame({f"loss_r{r}": CURVE[r] + shift for r in range(4)})
        f.insert(0, "window", range(4))
        f.insert(0, "head", head)
        f.insert(0, "layer", 1)
        f["loss_ablated"] = ABLATED + shift
        frames.append(f.iloc[::-1])  # any row order
    measure = {"knee_fraction": 0.01, "bootstrap": 100, "bootstrap_level": 0.9}
    measure["resolved_halfwidth"] = 1
    t = reliability(pd.concat(frames), measure, seed=0)
    assert t[["layer", "head"]].values.tolist() == [[1, 0], [1, 1]]
    assert t["knee"].tolist() == [2, 2] and t["knee_half_b"].tolist() == [3, 3]
    # the same resamples for every head of a model: equal curves up to a shift, equal intervals
    assert t["knee_boot_lo"].nunique() == 1 and t["knee_boot_hi"].nunique() == 1
