"""Rank estimators: answers solved by hand, and properties (hypothesis)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from entropic_bound.core.estimators import (
    all_estimators,
    energy_rank,
    entropy_rank,
    estimate,
    numerical_rank,
    participation_rank,
    stable_rank,
)


def test_hand_solved_two_values():
    s = [3.0, 4.0]  # sorted internally to [4, 3]; energies 16, 9 (total 25)
    assert numerical_rank(s) == 2
    assert stable_rank(s) == pytest.approx(25 / 16)
    p = np.array([4, 3]) / 7
    assert entropy_rank(s) == pytest.approx(math.exp(-(p * np.log(p)).sum()))
    assert participation_rank(s) == pytest.approx(625 / (256 + 81))
    assert energy_rank(s, 0.6) == 1  # 16/25 = 0.64 ≥ 0.6
    assert energy_rank(s, 0.9) == 2


def test_flat_spectrum_is_its_length_under_every_estimator():
    for v in all_estimators(np.ones(4)).values():
        assert v == pytest.approx(4.0)


def test_rank_one_and_zero_spectra():
    for v in all_estimators([2.0, 0.0, 0.0]).values():
        assert v == pytest.approx(1.0)
    for v in all_estimators(np.zeros(3)).values():
        assert v == 0.0


def test_numerical_tolerance_and_energy_edge():
    assert numerical_rank([1.0, 1e-4]) == 1
    assert numerical_rank([1.0, 1e-2]) == 2
    # linspace(1, 0.5, 8): the last value still carries > 1 % of the energy, so r_E(0.99) = 8
    s = np.linspace(1, 0.5, 8)
    assert energy_rank(s, 0.99) == 8
    assert energy_rank(np.r_[s, 1e-3 * np.ones(8)], 0.99) == 8


def test_batched_shapes():
    S = np.array([[1.0, 0.0, 0.0], [1.0, 1.0, 1.0]])
    np.testing.assert_array_equal(energy_rank(S), [1, 3])
    assert estimate(S[None], "energy_0.99").shape == (1, 2)


@pytest.mark.parametrize("bad", [[np.nan, 1.0], [1.0, np.inf], [-1.0, 1.0], []])
def test_bad_spectra_raise(bad):
    with pytest.raises(ValueError):
        all_estimators(np.array(bad))


def test_unknown_estimator_and_tau():
    with pytest.raises(ValueError, match="unknown estimator"):
        estimate([1.0], "nuclear")
    with pytest.raises(ValueError, match="tau"):
        energy_rank([1.0], 1.5)


# zeros, or values far enough from the subnormal range that a rescaling cannot flush them to 0
spectra = arrays(
    np.float64, st.integers(1, 12), elements=st.one_of(st.just(0.0), st.floats(1e-100, 1e3))
)


@settings(max_examples=200, deadline=None)
@given(spectra, st.floats(1e-3, 1e3))
def test_scale_invariance(s, c):
    a, b = all_estimators(s), all_estimators(s * c)
    for k in a:
        assert b[k] == pytest.approx(a[k], rel=1e-9, abs=1e-9) or k.startswith(
            ("energy", "numerical")
        )
    # integer-valued estimators can move only at exact ties; check them away from ties
    assert abs(b["energy_0.99"] - a["energy_0.99"]) <= 1


@settings(max_examples=200, deadline=None)
@given(spectra, st.randoms())
def test_permutation_invariance(s, rnd):
    perm = list(range(len(s)))
    rnd.shuffle(perm)
    a, b = all_estimators(s), all_estimators(s[perm])
    for k in a:
        assert b[k] == pytest.approx(a[k])


@settings(max_examples=200, deadline=None)
@given(spectra, st.floats(0.01, 1.0), st.floats(0.01, 1.0))
def test_energy_rank_monotone_in_tau(s, t1, t2):
    lo, hi = sorted((t1, t2))
    assert energy_rank(s, lo) <= energy_rank(s, hi)


@settings(max_examples=200, deadline=None)
@given(spectra)
def test_estimates_lie_between_zero_and_length(s):
    for v in all_estimators(s).values():
        assert 0 <= v <= len(s) + 1e-9
        if np.any(s > 0):
            assert v >= 1 - 1e-9
