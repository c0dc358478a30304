"""How well the knee of a head is measured (docs/method.md §9, "The knee's reliability"): from the
per-window losses the measurement keeps (:mod:`.knees`), never by running the model again.

For one head, ``curve`` [d_head + 1, N] holds L(r) per window (row d_head the full model's) and
``ablated`` [N] the mean-ablated loss per window. The knee rule (:func:`.knees.knee_of`) read on
a subset of the windows, or on a reweighting of them, gives:

* **split halves**: the knee on the even-indexed windows and on the odd-indexed ones (the
  windows are evenly spaced over the held-out text, so each half spans all of it);
* **bootstrap**: the knee on ``resamples`` multinomial resamplings of the N windows (one
  seeded draw shared by every head of a model), its central ``level`` interval [lo, hi] and the
  share of resamples equal to the knee; a resample whose gap is ≤ 0 has no knee (NaN) and lies
  outside every interval;
* **resolved**: the knee exists and its bootstrap interval lies within knee ± ``halfwidth``:
  to ± 1, the allowance of a test "within ±1 of the knee", the knee is known; a head whose knee
  is not resolved cannot tell a right estimate from a wrong one and is marked;
* **slack**: how far L(knee) − L_full sits under the rule's threshold fraction · gap (nats per
  byte): a knee a few 1e-6 under its threshold moves with any window.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: the bootstrap's defaults (the heads configs' ``measure`` section sets them)
RESAMPLES = 1000
LEVEL = 0.9
HALFWIDTH = 1
#: the columns :func:`reliability` adds per head
COLUMNS = (
    "knee_half_a",
    "knee_half_b",
    "knee_boot_lo",
    "knee_boot_hi",
    "knee_boot_share",
    "knee_slack",
    "knee_resolved",
)


def knees_from_means(means: np.ndarray, ablated: np.ndarray, fraction: float) -> np.ndarray:
    """The knee rule, batched: ``means`` [..., d_head + 1] (L(r), the last the full model's),
    ``ablated`` [...] -> knees [...] (float, NaN where the gap is ≤ 0). The same comparisons as
    :func:`.knees.knee_of`, so a knee read here equals the rule's on the same means."""
    full = means[..., -1]
    gap = ablated - full
    ok = (means - full[..., None]) <= fraction * gap[..., None]
    knee = np.argmax(ok, axis=-1).astype(np.float64)
    return np.where((gap > 0) & ok.any(axis=-1), knee, np.nan)


def bootstrap_weights(windows: int, resamples: int, seed: int) -> np.ndarray:
    """[resamples, windows]: the counts of each window in each multinomial resample, over N."""
    rng = np.random.default_rng([seed, 32])
    counts = rng.multinomial(windows, np.full(windows, 1.0 / windows), size=resamples)
    return counts / windows


def head_reliability(
    curve: np.ndarray,
    ablated: np.ndarray,
    fraction: float,
    weights: np.ndarray,
    level: float = LEVEL,
    halfwidth: int = HALFWIDTH,
) -> dict:
    """The reliability of one head's knee (module docstring): ``curve`` [d_head + 1, N],
    ``ablated`` [N], ``weights`` [resamples, N] from :func:`bootstrap_weights`."""
    curve, ablated = np.asarray(curve, np.float64), np.asarray(ablated, np.float64)
    means, abl = curve.mean(1), ablated.mean()
    knee = float(knees_from_means(means, np.asarray(abl), fraction))
    halves = [
        float(knees_from_means(curve[:, i::2].mean(1), np.asarray(ablated[i::2].mean()), fraction))
        for i in (0, 1)
    ]
    boot = knees_from_means(weights @ curve.T, weights @ ablated, fraction)
    tail = (1 - level) / 2
    if np.isnan(boot).mean() > tail or not np.isfinite(knee):
        lo = hi = np.nan
    else:  # NaN resamples (no gap) count as +inf: above every knee, in the upper tail
        ranked = np.where(np.isnan(boot), np.inf, boot)
        lo, hi = (float(np.quantile(ranked, q, method="inverted_cdf")) for q in (tail, 1 - tail))
        hi = hi if np.isfinite(hi) else np.nan
    slack = np.nan
    if np.isfinite(knee):
        slack = fraction * (abl - means[-1]) - (means[int(knee)] - means[-1])
    resolved = bool(
        np.isfinite(knee) and np.isfinite(hi) and lo >= knee - halfwidth and hi <= knee + halfwidth
    )
    return {
        "knee": knee,
        "knee_half_a": halves[0],
        "knee_half_b": halves[1],
        "knee_boot_lo": lo,
        "knee_boot_hi": hi,
        "knee_boot_share": float(np.mean(boot == knee)) if np.isfinite(knee) else np.nan,
        "knee_slack": float(slack),
        "knee_resolved": resolved,
    }


def reliability(windows: pd.DataFrame, measure: dict, seed: int) -> pd.DataFrame:
    """One row per head (layer, head, knee, :data:`COLUMNS`) from the per-window losses
    ``windows`` (the measurement's ``knee_windows`` table: layer, head, window, loss_r0 …
    loss_r<d_head>, loss_ablated) and the config's ``measure`` section (knee_fraction,
    bootstrap, bootstrap_level, resolved_halfwidth)."""
    curve_cols = sorted(
        (c for c in windows.columns if c.startswith("loss_r")), key=lambda c: int(c[6:])
    )
    n = int(windows.groupby(["layer", "head"]).size().iloc[0])
    weights = bootstrap_weights(n, measure["bootstrap"], seed)
    rows = []
    for (layer, head), g in windows.sort_values("window").groupby(["layer", "head"], sort=True):
        rel = head_reliability(
            g[curve_cols].to_numpy().T,
            g["loss_ablated"].to_numpy(),
            measure["knee_fraction"],
            weights,
            measure["bootstrap_level"],
            measure["resolved_halfwidth"],
        )
        rows.append({"layer": int(layer), "head": int(head)} | rel)
    return pd.DataFrame(rows)
