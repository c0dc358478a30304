"""What an estimator of the knee must beat (docs/method.md §9, "Null baselines"): guesses that
know nothing of a head but the knees of its model's heads.

* ``loo_median``: the median knee of the model's *other* heads (leave one out): "every head
  needs about the same rank", predicted out of sample. At d_head = 16 it names the knee as well
  as any estimator did (seed 0, 2026-12-06, 4059078: exact on 8/16 heads, within ±1 on 14/16).
* ``model_median``: the median knee of all the model's heads, the head's own included: the
  best constant in hindsight (the median minimises the summed absolute error), so no constant
  beats it on mean absolute error. The leave-one-out median can be beaten by a constant near
  the middle of the knees: leaving a head out moves the median *away* from its knee (a head
  above the median lowers it, one below raises it), so a guess that ignores the head is
  slightly worse than a fixed one. An estimator that beats ``model_median`` carries
  information about the head itself; the registration tests against it (§9b).
* ``layer_mean``: the mean knee of the other heads of the same layer: "heads of a layer are
  alike".

A head without a knee (NaN) is never a guess's input. :func:`paired` compares an estimator
with a guess head by head: the absolute errors |estimate − knee| and |guess − knee|, unrounded;
a head wins when the estimator's error is the smaller, and the one-sided tests of
:mod:`.stats` ask whether the estimator's errors are systematically smaller.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from entropic_bound.heads.stats import sign_test, wilcoxon_greater

#: the null baselines, in the order of the tables
NULLS = ("loo_median", "model_median", "layer_mean")


def _leave_one_out(knees: pd.Series, keys: list[pd.Series], how: str) -> pd.Series:
    """For each row, ``how`` (median or mean) of the finite knees of the other rows with the
    same ``keys``; NaN where there are none."""
    frame = pd.DataFrame({"knee": knees.to_numpy()}, index=knees.index)
    for i, k in enumerate(keys):
        frame[f"k{i}"] = k.to_numpy()
    out = pd.Series(np.nan, index=knees.index)
    for _, g in frame.groupby([f"k{i}" for i in range(len(keys))], sort=False):
        values = g["knee"].to_numpy()
        for pos, idx in enumerate(g.index):
            others = np.delete(values, pos)
            others = others[np.isfinite(others)]
            if others.size:
                out[idx] = float(np.median(others) if how == "median" else np.mean(others))
    return out


def null_guesses(table: pd.DataFrame, model: str | None = None) -> pd.DataFrame:
    """The guesses of :data:`NULLS` for every head of ``table`` (columns layer, knee, and the
    model column ``model`` when the table holds several models): one column per null."""
    models = table[model] if model else pd.Series(0, index=table.index)
    finite = table["knee"].where(np.isfinite(table["knee"]))
    return pd.DataFrame(
        {
            "loo_median": _leave_one_out(table["knee"], [models], "median"),
            "model_median": finite.groupby(models.to_numpy()).transform("median"),
            "layer_mean": _leave_one_out(table["knee"], [models, table["layer"]], "mean"),
        },
        index=table.index,
    )


def paired(estimate, guess, knee) -> dict:
    """The estimator against a guess on the heads where all three are finite: heads, mean
    absolute errors, their mean difference (guess − estimator: > 0 when the estimator is
    closer), wins/losses/ties and the one-sided sign and Wilcoxon p-values."""
    e, g, k = (np.asarray(v, dtype=np.float64) for v in (estimate, guess, knee))
    ok = np.isfinite(e) & np.isfinite(g) & np.isfinite(k)
    err_e, err_g = np.abs(e[ok] - k[ok]), np.abs(g[ok] - k[ok])
    diff = err_g - err_e
    wins, losses = int((diff > 0).sum()), int((diff < 0).sum())
    return {
        "heads": int(ok.sum()),
        "mae": float(err_e.mean()) if ok.any() else np.nan,
        "mae_null": float(err_g.mean()) if ok.any() else np.nan,
        "mae_diff": float(diff.mean()) if ok.any() else np.nan,
        "wins": wins,
        "losses": losses,
        "ties": int(ok.sum()) - wins - losses,
        "p_sign": sign_test(wins, losses),
        "p_wilcoxon": wilcoxon_greater(diff)[1],
    }
