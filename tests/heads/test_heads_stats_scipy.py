"""The heads study's hand-written tests (heads/stats.py) against scipy's on random inputs: the
sign test and scipy's exact binomial test, the exact Wilcoxon and scipy's exact sign-flip
distribution (ties and zeros included), the stratified Spearman's statistic and scipy's
spearmanr, its permutation p-value and scipy's exact permutation test (one stratum). scipy has
no Holm adjustment: Holm is checked against the step-down procedure written out here."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from entropic_bound.heads.stats import holm, sign_test, stratified_spearman, wilcoxon_greater

stats = pytest.importorskip("scipy.stats", reason="scipy: the [dev] extra")


@settings(max_examples=300)
@given(st.integers(0, 200), st.integers(0, 200))
def test_sign_test_is_scipys_exact_binomial_test(wins, losses):
    n = wins + losses
    want = 1.0 if n == 0 else stats.binomtest(wins, n, 0.5, alternative="greater").pvalue
    assert sign_test(wins, losses) == pytest.approx(want, rel=1e-12, abs=1e-300)


#: differences with ties and zeros: small integers, halves and a few distinct reals
DIFFERENCES = st.lists(
    st.one_of(
        st.integers(-4, 4).map(float),
        st.integers(-8, 8).map(lambda k: k / 2),
        st.floats(-10, 10, allow_nan=False).filter(lambda x: abs(x) > 1e-6),
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=100)  # scipy's sign-flip enumeration: ~0.2 s an example
@given(DIFFERENCES)
def test_wilcoxon_is_scipys_exact_sign_flip_test(d):
    """Up to 12 nonzero differences: scipy enumerates all 2^n sign patterns of the observed
    (average, tied) ranks, which is the null distribution wilcoxon_greater computes."""
    d = np.asarray(d)
    w, p = wilcoxon_greater(d)
    nonzero = d[d != 0]
    if nonzero.size < 2:  # scipy asks for two; by hand: W⁺ = 1 with probability ½
        want = (
            (0.0, 1.0)
            if nonzero.size == 0
            else (float(nonzero[0] > 0), 0.5 + 0.5 * (nonzero[0] < 0))
        )
        assert (w, p) == want
        return
    ref = stats.wilcoxon(
        d, alternative="greater", zero_method="wilcox", method=stats.PermutationMethod()
    )
    assert w == pytest.approx(ref.statistic, abs=1e-9)
    assert p == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-12)


@settings(max_examples=100)
@given(
    st.lists(st.floats(1e-3, 5, allow_nan=False), min_size=2, max_size=30, unique=True),
    st.lists(st.booleans(), min_size=30, max_size=30),
)
def test_wilcoxon_without_ties_is_scipys_exact_table(magnitudes, negative):
    """No ties, no zeros: scipy's exact distribution of W⁺ over ranks 1..n (up to n = 30)."""
    d = np.where(negative[: len(magnitudes)], -1.0, 1.0) * np.asarray(magnitudes)
    w, p = wilcoxon_greater(d)
    ref = stats.wilcoxon(d, alternative="greater", method="exact")
    assert w == pytest.approx(ref.statistic, abs=1e-9)
    assert p == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-12)


@st.composite
def strata_samples(draw, max_strata=4, max_size=9):
    """(x, y, strata): 1-4 strata of 3-9 points, values drawn from few levels (ties)."""
    xs, ys, ss = [], [], []
    for s in range(draw(st.integers(1, max_strata))):
        n = draw(st.integers(3, max_size))
        levels = draw(st.integers(2, 12))
        xs += draw(st.lists(st.integers(0, levels), min_size=n, max_size=n))
        ys += draw(st.lists(st.integers(0, levels), min_size=n, max_size=n))
        ss += [s] * n
    return np.array(xs, float), np.array(ys, float), np.array(ss)


@settings(max_examples=200)
@given(strata_samples())
def test_stratified_spearman_is_scipys_weighted_spearman(sample):
    x, y, s = sample
    rho, _, used = stratified_spearman(x, y, s, permutations=10)
    rhos, sizes = [], []
    for k in np.unique(s):
        xk, yk = x[s == k], y[s == k]
        if len(np.unique(xk)) > 1 and len(np.unique(yk)) > 1:
            rhos.append(stats.spearmanr(xk, yk).statistic)
            sizes.append(len(xk))
    assert used == len(rhos)
    if not rhos:
        assert math.isnan(rho)
        return
    assert rho == pytest.approx(np.average(rhos, weights=sizes), abs=1e-12)


@settings(max_examples=40)
@given(strata_samples(max_strata=1, max_size=8), st.integers(0, 2**16))
@example(  # ρ = 0 exactly, with ties: scipy's float ρ alone would call it ±2e-17
    (np.array([0.0, 0, 0, 1, 0, 0, 1]), np.array([0.0, 1, 2, 1, 2, 2, 2]), np.zeros(7, int)), 0
)
def test_spearman_permutation_p_is_scipys_exact_permutation_p(sample, seed):
    """One stratum of up to 8 points (8! = 40320 pairings, all enumerated by scipy): the Monte
    Carlo p-value of 20000 permutations lies within 5 standard errors of the exact one."""
    x, y, s = sample
    if len(np.unique(x)) < 2 or len(np.unique(y)) < 2:
        return
    perms = 20000
    _, p, _ = stratified_spearman(x, y, s, permutations=perms, seed=seed)
    rx, ry = stats.rankdata(x), stats.rankdata(y)
    # ρ up to a positive factor, in integers (doubled ranks, centred times n): exact in floats,
    # so a tie with the observed value (ρ = 0 is common with few levels) is a tie, not rounding
    cx = len(x) * 2 * rx - 2 * rx.sum()
    ry2 = 2 * ry

    def rho(ranks, axis=-1):  # a permutation of y's ranks keeps their mean and spread
        return np.sum(cx * ranks, axis=axis)

    assert np.sign(rho(ry2)) == np.sign(np.round(stats.spearmanr(x, y).statistic, 12))
    exact = stats.permutation_test(
        (ry2,),
        rho,
        permutation_type="pairings",
        alternative="greater",
        n_resamples=math.inf,
        vectorized=True,
    ).pvalue
    se = math.sqrt(max(exact * (1 - exact), 1 / perms) / perms)
    assert abs(p - exact) <= 5 * se + 1 / perms, (p, exact)


def _holm_step_down(p: np.ndarray, alpha: float) -> np.ndarray:
    """Holm (1979) as written: reject the k smallest while p_(i) ≤ α / (m − i + 1)."""
    order = np.argsort(p, kind="stable")
    reject = np.zeros(len(p), bool)
    for i, idx in enumerate(order):
        if p[idx] > alpha / (len(p) - i):
            break
        reject[idx] = True
    return reject


@settings(max_examples=300)
@given(
    st.lists(st.floats(0, 1), min_size=1, max_size=20),
    st.lists(st.floats(1e-4, 0.5), min_size=1, max_size=5),
)
def test_holm_adjusted_p_rejects_what_the_step_down_procedure_rejects(p, alphas):
    p = np.asarray(p)
    adjusted = holm(p)
    assert np.all((adjusted >= p) & (adjusted <= 1.0))
    assert np.all(adjusted <= np.minimum(1.0, len(p) * p) + 1e-15)  # never above Bonferroni
    for alpha in alphas:
        want = _holm_step_down(p, alpha)
        got = adjusted <= alpha
        # at a boundary (p·k == α in floats) the two may round apart: compare away from it
        exact_tie = np.isclose(np.sort(p) * np.arange(len(p), 0, -1), alpha, rtol=1e-12)
        if not exact_tie.any():
            assert np.array_equal(got, want), (p, alpha)
