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


# --- the floor-aware rank (docs/method.md §2, "The floor-aware rank") -----------------------


def test_floor_rank_hand_solved():
    from entropic_bound.core.estimators import floor_rank, gavish_donoho_omega

    assert gavish_donoho_omega(0.0) == pytest.approx(1.43)
    assert gavish_donoho_omega(1.0) == pytest.approx(0.56 - 0.95 + 1.82 + 1.43)
    # 3 large values over a flat floor of 13 ones: median 1, cut 1.43 -> 3; the bulk then holds
    # 13 ones (median 1 again): the fixed point is 3
    assert floor_rank([10.0, 10.0, 10.0] + [1.0] * 13) == 3
    # a flat spectrum is all floor: the cut 1.43·s sits above every value
    assert floor_rank(np.ones(16)) == 0
    # exact low rank: zeros are the floor, and a floor of zeros cuts at tol·s₁
    assert floor_rank([1.0, 0.9, 0.8, 0.0, 0.0, 0.0]) == 3
    # r = k/2: the first median is (s_8 + 0)/2 = 0.25, cut 0.3575 < 0.5 -> 8, then the bulk is 0
    assert floor_rank(np.r_[np.linspace(1, 0.5, 8), np.zeros(8)]) == 8
    # r = 10 of 16 (more than half): the median is a signal value (s_8 + s_9)/2 = 0.6389, cut
    # 0.9136 -> 2 values; bulk s[2:] (14 values, 8 signal): median (s_9 + s_10)/2 = 0.5278,
    # cut 0.7547 -> 5; bulk s[5:] (11 values): median s_10 = 0.5, cut 0.715 -> 6; bulk s[6:]
    # (10 values, 4 signal): median 0 -> 10
    assert floor_rank(np.r_[np.linspace(1, 0.5, 10), np.zeros(6)]) == 10
    # docs/method.md's softmax example's spectrum (P_attn of a rank-3 QK kernel): 3 values over a floor
    s = [1.0, 0.762, 0.531, 0.15, 0.148, 0.146, 0.146, 0.145, 0.143, 0.142, 0.141, 0.14]
    assert floor_rank(s + [0.138, 0.136, 0.135, 0.133]) == 3
    # values just above and below the cut 1.43 × floor
    assert floor_rank([1.44, 1.0, 1.0, 1.0]) == 1
    assert floor_rank([1.42, 1.0, 1.0, 1.0]) == 0
    # a square noise matrix (β = 1) cuts at 2.858 × the median
    assert floor_rank([2.9, 1.0, 1.0, 1.0], beta=1.0) == 1
    assert floor_rank([2.8, 1.0, 1.0, 1.0], beta=1.0) == 0
    assert floor_rank(np.zeros(4)) == 0


def test_floor_rank_batched_and_registered():
    from entropic_bound.core.estimators import estimator_names, floor_rank, is_opt_in

    S = np.array([[10.0, 1, 1, 1], [1.0, 1, 1, 1], [1.0, 0, 0, 0]])
    np.testing.assert_array_equal(floor_rank(S), [1, 0, 1])
    np.testing.assert_array_equal(estimate(S, "floor"), [1, 0, 1])
    # opt-in: never among the paper's names (the tables), always among the CLI's
    assert "floor" not in estimator_names() and "floor" in estimator_names(opt_in=True)
    assert is_opt_in("floor") and not is_opt_in("energy_0.99")
    assert "floor" not in all_estimators(S) and "floor" in all_estimators(S, extra=["floor"])
    with pytest.raises(ValueError, match="beta"):
        floor_rank([1.0], beta=2.0)


floor_spectra = st.tuples(
    st.integers(1, 7),  # r < k/2 with k = 16: the floor is the majority
    arrays(np.float64, 16, elements=st.floats(0.75, 1.0)),  # a floor flat within 1.43
    arrays(np.float64, 7, elements=st.floats(1.0, 4.0)),  # signal pattern
)


@settings(max_examples=200, deadline=None)
@given(floor_spectra, st.floats(1e-3, 1e3))
def test_floor_rank_scale_invariant(spec, c):
    from entropic_bound.core.estimators import floor_rank

    r, floor, signal = spec
    s = np.r_[signal[:r] * 3, floor[r:]]
    assert floor_rank(s * c) == floor_rank(s)


@settings(max_examples=200, deadline=None)
@given(floor_spectra, st.floats(1.0, 50.0), st.floats(1.0, 50.0))
def test_floor_rank_monotone_in_the_signal(spec, c1, c2):
    """Over a fixed floor holding the majority (r < k/2), a stronger signal never lowers the
    rank, and a strong enough one is found exactly (every bulk median is then a floor value)."""
    from entropic_bound.core.estimators import floor_rank

    r, floor, signal = spec
    lo, hi = sorted((c1, c2))
    spectrum = lambda c: np.r_[signal[:r] * c, floor[r:]]  # noqa: E731
    assert floor_rank(spectrum(lo)) <= floor_rank(spectrum(hi))
    # signal > 1.43 × the largest floor value: every signal value is above every cut
    assert floor_rank(np.r_[signal[:r] * 1.5, floor[r:]]) == r


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 8), arrays(np.float64, 8, elements=st.floats(1e-2, 1e2)))
def test_floor_rank_exact_low_rank(r, signal):
    """Exactly low rank (zeros beyond r ≤ k/2 = 8): the rank is r, whatever the signal's shape."""
    from entropic_bound.core.estimators import floor_rank

    signal = signal[:r]
    signal = np.maximum(signal, 2e-3 * signal.max())  # above the numerical tolerance
    assert floor_rank(np.r_[signal, np.zeros(16 - r)]) == r


# --- when a spectrum has a floor (docs/method.md §2, "When a spectrum has a floor") ----------


def test_floor_reasons_hand_solved():
    from entropic_bound.core.estimators import floor_rank, floor_reasons

    # 3 values over a flat floor of 13 ones: a floor (rank 3)
    assert floor_reasons([10.0, 10.0, 10.0] + [1.0] * 13) == ""
    # W_Qᵀ W_K of a d_head = 16 head in d_model = 64: 48 exact zeros are no floor
    assert floor_reasons(np.r_[np.linspace(1, 0.1, 16), np.zeros(48)]) == "bulk of zeros"
    assert floor_reasons(np.zeros(5)) == "bulk of zeros"
    # a power law: the cut walks down to where its tail looks flat, past half the spectrum
    assert floor_reasons(1.0 / np.arange(1, 33) ** 1.5) == "bulk under half"
    # a bulk of 16 after 4 signal values, 12 ones and 4 values of 0.5: its q10 is 0.5 < 1/1.43
    bulk = np.r_[[9.0] * 4, [1.0] * 12, [0.5] * 4]
    assert floor_rank(bulk) == 4 and floor_reasons(bulk) == "bulk not flat"
    assert floor_reasons(bulk, quantile=0.25) == ""  # its q25 is 1
    assert floor_reasons(bulk, flatness=0.4) == ""  # a looser flatness (configurable)


def test_floor_reasons_batched():
    from entropic_bound.core.estimators import floor_reasons

    S = np.array([[10.0, 1, 1, 1], [1.0, 0, 0, 0], [1.0, 0.6, 0.3, 0.1]])
    assert floor_reasons(S).tolist() == ["", "bulk of zeros", "bulk under half"]
    assert floor_reasons(S[None]).shape == (1, 3)


@settings(max_examples=100, deadline=None)
@given(floor_spectra, st.floats(1e-3, 1e3))
def test_a_flat_floor_under_a_strong_signal_is_a_floor_at_every_scale(spec, c):
    from entropic_bound.core.estimators import floor_reasons

    r, floor, signal = spec
    s = np.r_[signal[:r] * 1.5, floor[r:]]
    assert floor_reasons(s * c) == ""
