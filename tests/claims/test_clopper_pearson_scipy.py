"""Registration v3's Clopper–Pearson interval (claims/theory_v3.py: bisection on a binomial tail
summed in log space, no scipy) against scipy's exact interval on random counts."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from entropic_bound.claims.theory_v3 import clopper_pearson

stats = pytest.importorskip("scipy.stats", reason="scipy: the [dev] extra")


@st.composite
def counts(draw):
    n = draw(st.one_of(st.integers(1, 40), st.integers(41, 3000)))
    return draw(st.integers(0, n)), n


@settings(max_examples=300)
@given(counts(), st.sampled_from([0.5, 0.8, 0.9, 0.95, 0.99, 0.999]))
def test_clopper_pearson_is_scipys_exact_interval(kn, confidence):
    k, n = kn
    lo, hi = clopper_pearson(k, n, confidence)
    ref = stats.binomtest(k, n).proportion_ci(confidence_level=confidence, method="exact")
    assert lo == pytest.approx(ref.low, rel=1e-9, abs=1e-11)
    assert hi == pytest.approx(ref.high, rel=1e-9, abs=1e-11)
