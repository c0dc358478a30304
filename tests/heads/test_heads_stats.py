"""The heads study's tests (docs/method.md §9b): exact values solved by hand."""

import math

import numpy as np
import pytest

from entropic_bound.heads.stats import holm, sign_test, stratified_spearman, wilcoxon_greater


def test_sign_test_by_hand():
    assert sign_test(3, 0) == pytest.approx(1 / 8)
    assert sign_test(2, 1) == pytest.approx(4 / 8)  # P(X ≥ 2), X ~ Bin(3, ½)
    assert sign_test(0, 4) == 1.0 and sign_test(0, 0) == 1.0
    assert sign_test(10, 0) == pytest.approx(2.0**-10)


def test_wilcoxon_by_hand():
    # d = (1, 2, 3): W⁺ = 6, the largest of 8 equally likely sign patterns
    assert wilcoxon_greater([1.0, 2.0, 3.0]) == (6.0, pytest.approx(1 / 8))
    # d = (1, −2, 3): W⁺ = 4; patterns with W⁺ ≥ 4: {3,1} 4, {3,2} 5, {1,2,3} 6, {3} 3 no,
    # {1,... }: sums of subsets of {1,2,3} ≥ 4 are 4, 5, 6 -> 3 of 8
    assert wilcoxon_greater([1.0, -2.0, 3.0]) == (4.0, pytest.approx(3 / 8))
    # zeros are dropped; ties share their average rank: |d| = (1, 1) -> ranks 1.5, 1.5
    w, p = wilcoxon_greater([0.0, 1.0, 1.0])
    assert w == 3.0 and p == pytest.approx(1 / 4)
    assert wilcoxon_greater([0.0, 0.0]) == (0.0, 1.0)
    # all negative: p = 1
    assert wilcoxon_greater([-1.0, -2.0])[1] == 1.0


def test_wilcoxon_matches_the_normal_approximation_at_size():
    rng = np.random.default_rng(0)
    d = rng.normal(0.3, 1.0, 60)
    w, p = wilcoxon_greater(d)
    n = 60
    mean, sd = n * (n + 1) / 4, math.sqrt(n * (n + 1) * (2 * n + 1) / 24)
    z = (w - mean) / sd
    assert p == pytest.approx(0.5 * math.erfc(z / math.sqrt(2)), abs=5e-3)


def test_holm_by_hand():
    got = holm([0.01, 0.04, 0.03, np.nan])
    # sorted 0.01, 0.03, 0.04 (m = 3): 0.03, 0.06, max(0.06, 0.04) = 0.06
    assert got[:3] == pytest.approx([0.03, 0.06, 0.06]) and math.isnan(got[3])
    assert holm([0.6, 0.5]) == pytest.approx([1.0, 1.0])


def test_stratified_spearman():
    x = [1, 2, 3, 4, 1, 2, 3, 4]
    y = [1, 2, 3, 4, 4, 3, 2, 1]  # +1 in stratum a, −1 in stratum b
    s = ["a"] * 4 + ["b"] * 4
    rho, p, used = stratified_spearman(x, y, s, permutations=200, seed=0)
    assert rho == pytest.approx(0.0) and used == 2 and 0.3 < p < 0.9
    rho, p, used = stratified_spearman(x, x, s, permutations=999, seed=0)
    # perfect in both strata: only the identity permutations (1 in 24² ≈ 0.002) reach it
    assert rho == pytest.approx(1.0) and p < 0.01
    # a stratum too small or constant is left out
    rho, p, used = stratified_spearman([1, 2, 3, 4, 5, 5], [1, 2, 3, 4, 1, 2], list("aaaabb"))
    assert used == 1 and rho == pytest.approx(1.0)
    assert math.isnan(stratified_spearman([1, 1], [1, 2], ["a", "a"])[0])


def test_a_correlation_owed_to_the_layers_alone_is_not_significant_within_them():
    """Planted: x and y both follow the layer (its index plus independent noise), nothing else.
    Permuting within each model, the U shape across layers reads as ordering (p small);
    permuting within each model × layer cell, the null holds the same layer effect (p large).
    And a y that orders the heads inside each layer too passes both."""
    rng = np.random.default_rng(0)
    models, layers, heads = 4, 4, 4
    layer = np.tile(np.repeat(np.arange(layers), heads), models)
    model = np.repeat(np.arange(models), layers * heads)
    x = 3 * layer + rng.standard_normal(layer.size)
    y = 3 * layer + rng.standard_normal(layer.size)
    cell = model * layers + layer
    _, p_model, _ = stratified_spearman(x, y, model, permutations=2000)
    _, p_cell, _ = stratified_spearman(x, y, model, permutations=2000, within=cell)
    assert p_model < 0.01 and p_cell > 0.05
    _, p_both, _ = stratified_spearman(x, x + 0.1 * y, model, permutations=2000, within=cell)
    assert p_both < 0.01


def test_cells_of_one_head_leave_nothing_to_permute():
    """Every cell a single head: the only within-cell permutation is the identity, so every
    null draw equals the observed statistic and p = 1."""
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal(12), rng.standard_normal(12)
    model = np.repeat([0, 1], 6)
    rho, p, _ = stratified_spearman(x, y, model, permutations=50, within=np.arange(12))
    assert p == 1.0 and np.isfinite(rho)
