"""The tests the heads study's comparisons and registration use (docs/method.md §9, §9b), exact
where the sample is small and without scipy:

* :func:`sign_test`: one-sided exact binomial test of wins against losses (ties dropped);
* :func:`wilcoxon_greater`: the Wilcoxon signed-rank test of H₀ "the paired differences are
  symmetric about 0" against "they tend to be positive", one-sided, zeros dropped, tied
  magnitudes given their average rank, exact (the sign-flip distribution of the ranks actually
  observed, by dynamic programming over doubled ranks);
* :func:`stratified_spearman`: the mean within-stratum Spearman correlation (weighted by the
  stratum's size) and its one-sided permutation p-value, permuting within each stratum (a
  model's heads are compared with each other, never with another model's);
* :func:`holm`: Holm's step-down adjustment of a family of p-values.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd


def sign_test(wins: int, losses: int) -> float:
    """P(X ≥ wins) for X ~ Binomial(wins + losses, ½): one-sided; 1.0 when there are none."""
    n = wins + losses
    if n == 0:
        return 1.0
    return min(1.0, sum(math.comb(n, k) for k in range(wins, n + 1)) / 2.0**n)


def signed_ranks(d) -> tuple[np.ndarray, np.ndarray]:
    """(doubled average ranks of |d| (integers), signs) of the nonzero differences ``d``."""
    d = np.asarray(d, dtype=np.float64)
    d = d[d != 0]
    ranks = pd.Series(np.abs(d)).rank(method="average").to_numpy()
    return np.rint(2 * ranks).astype(np.int64), np.sign(d)


def wilcoxon_greater(d) -> tuple[float, float]:
    """(W⁺, p): W⁺ the sum of the ranks of the positive differences, p = P(W⁺ ≥ observed)
    under H₀ (each rank's sign ±1 with probability ½), exact; (0, 1) when every d is 0."""
    doubled, signs = signed_ranks(d)
    if doubled.size == 0:
        return 0.0, 1.0
    observed = int(doubled[signs > 0].sum())
    prob = np.zeros(int(doubled.sum()) + 1)
    prob[0] = 1.0
    for r in doubled:  # each rank joins W⁺ with probability ½
        shifted = np.zeros_like(prob)
        shifted[r:] = prob[: prob.size - r]
        prob = 0.5 * (prob + shifted)
    return observed / 2.0, float(min(1.0, prob[observed:].sum()))


def stratified_spearman(
    x, y, strata, permutations: int = 10000, seed: int = 0, min_size: int = 3, within=None
) -> tuple[float, float, int]:
    """(ρ̄, p, strata used): ρ̄ the mean of the within-stratum Spearman correlations of x and y
    weighted by stratum size (strata of fewer than ``min_size`` points, or where x or y is
    constant, left out), p the share of ``permutations`` within-stratum permutations of y whose
    ρ̄ is ≥ the observed (counting the observed: (1 + #≥) / (1 + permutations)). Spearman with
    average ranks for ties: the Pearson correlation of the ranks, which a permutation of y's
    ranks leaves with the same means and spreads, so every permutation is one product.

    ``within`` (cells, e.g. the layer of each head): the null permutes y only inside each cell
    of a stratum, the statistic unchanged; a correlation that x and y owe to the cells alone
    (both following the layer) then has a null as large as itself. None: within the strata."""
    cells = np.zeros(len(np.asarray(x))) if within is None else pd.factorize(np.asarray(within))[0]
    frame = pd.DataFrame(
        {"x": np.asarray(x, float), "y": np.asarray(y, float), "s": strata, "c": cells}
    )
    groups, parts = [], []
    for _, g in frame.groupby("s", sort=True):
        if len(g) >= min_size and g["x"].nunique() > 1 and g["y"].nunique() > 1:
            rx, ry = (g[c].rank().to_numpy() for c in ("x", "y"))
            rx, ry = rx - rx.mean(), ry - ry.mean()
            groups.append((rx / np.linalg.norm(rx), ry / np.linalg.norm(ry)))
            parts.append(pd.factorize(g["c"].to_numpy())[0])
    if not groups:
        return math.nan, math.nan, 0
    sizes = np.array([len(gx) for gx, _ in groups], dtype=np.float64)
    weights = sizes / sizes.sum()
    observed = float(sum(w * gx @ gy for w, (gx, gy) in zip(weights, groups, strict=True)))
    rng = np.random.default_rng([seed, 9])
    null = np.zeros(permutations)
    for w, (gx, gy), part in zip(weights, groups, parts, strict=True):
        tiled = np.tile(gy, (permutations, 1))
        if within is None:
            tiled = rng.permuted(tiled, axis=1)
        else:
            for c in range(part.max() + 1):
                at = np.flatnonzero(part == c)
                tiled[:, at] = rng.permuted(tiled[:, at], axis=1)
        null += w * (tiled @ gx)
    hits = int(np.sum(null >= observed - 1e-12))
    return observed, (1 + hits) / (1 + permutations), len(groups)


def holm(pvalues) -> np.ndarray:
    """Holm's adjusted p-values (same order as given): the i-th smallest times (m − i + 1),
    made non-decreasing in that order, capped at 1. NaN stays NaN and does not count in m."""
    p = np.asarray(pvalues, dtype=np.float64)
    out = np.full_like(p, np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    order = ok[np.argsort(p[ok], kind="stable")]
    m, running = len(order), 0.0
    for i, idx in enumerate(order):
        running = max(running, min(1.0, (m - i) * p[idx]))
        out[idx] = running
    return out
