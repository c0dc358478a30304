"""The floor-aware rank beside r_E(0.99), exploratory (no verdict; docs/method.md §8).

The data-only P_attn spectrum of softmax attention is A's spectrum plus a flat floor (noise and
softmax's non-linear part); r_E(0.99) counts the floor once it holds more than 1 % of the
energy. Here the floor-aware rank (``floor``, docs/method.md §2) and r_E(0.99) are compared by
their exact rate against r* on two sets of spectra, recomputed (no training):

* the frontier grid (``frontier`` of the config: L3, L4 × value map × n × σ × β), on the
  **held-out** seeds ``exploratory.floor_aware.seeds``, which no one looked at while designing the
  estimator; predictors P_attn and P_invert (P_static is not a kernel-rank predictor on
  attention, claim C5);
* the ladder: P_attn on the config's tasks of every rung whose kernel is the query-key A (L2,
  Lλ, L3, L4), at the task's σ and every ``predict.noisy_sigmas``.

:func:`floor_aware_decision` states the rule by which ``entropic-bound predict`` adopts the
floor-aware rank for softmax-like data, and applies it to the held-out rows.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from entropic_bound.analysis.columns import exact_summary
from entropic_bound.core.estimators import estimate

COLUMNS = [
    "spectra",
    "class",
    "value_map",
    "predictor",
    "n",
    "d",
    "sigma",
    "beta",
    "estimator",
    "cases",
    "exact_rate",
    "mean_abs_error",
]
FRONTIER = "frontier (held-out seeds)"
LADDER = "ladder (paper tasks)"
KEYS = ["class", "value_map", "predictor", "n", "d", "sigma", "beta"]
#: the pre-stated rule (docs/method.md §8): the floor-aware rank replaces r_E(0.99) for
#: softmax-like data when, on L4's P_attn at n > d (where P_attn is the softmax predictor),
#: pooled over the held-out seeds, its exact rate is higher by at least this margin ...
DECISION_MARGIN = 0.05
#: ... and it is not lower on L3 (linear attention) by more than this
DECISION_L3_SLACK = 0.02


def frontier_rows(
    fcfg: dict,
    seeds,
    base_seed: int,
    estimators,
    clip: float,
    progress=None,
    p_attn_sigma: str = "linear",
):
    """Per-case estimates on the frontier grid at ``seeds``: a DataFrame with the KEYS, r_star,
    seed, estimator, r_hat (one row per case × estimator). ``p_attn_sigma``: P_attn's noisy
    copies formed or by linearity (frontier.grid); the two agree to float64 rounding, and X3
    reads only the integer ranks (docs/method.md §8)."""
    from entropic_bound.frontier.grid import frontier_spectra

    cfg = {**fcfg, "seeds": list(seeds), "p_attn_sigma": p_attn_sigma}
    keys: list[dict] = []
    names: list[str] = []
    r_hat: list[np.ndarray] = []
    for block, spec in frontier_spectra(
        cfg, base_seed, clip, progress, predictors=("P_attn", "P_invert")
    ):
        # each block: one predictor, its σ's, spectra at their own length (never padded:
        # the floor-aware rank counts zeros as floor)
        for est in estimators:
            keys.extend(block)
            names.extend([est] * len(block))
            r_hat.append(np.asarray(estimate(spec, est), dtype=np.float64))
    if not keys:
        return pd.DataFrame()
    return pd.DataFrame(keys).assign(estimator=names, r_hat=np.concatenate(r_hat))


def ladder_rows(cfg: dict, estimators, spectra: pd.DataFrame) -> pd.DataFrame:
    """Per-task estimates of P_attn on the config's query-key rungs (L2, Lλ, L3, L4), at the
    task's σ and every noisy σ of ``predict``; the same columns as :func:`frontier_rows`.
    ``spectra``: the predict stage's (predict/stage.py, ``data_only_spectra``), whose P_attn
    rows are these spectra, computed there once (the tasks are not made again here)."""
    from entropic_bound.core.rungs import parse_rung
    from entropic_bound.tasks.grid import task_specs

    attn = spectra[spectra["predictor"] == "P_attn"]
    of = {(t, float(sg)): s for t, sg, s in zip(attn["task_id"], attn["sigma"], attn["spectrum"])}
    specs = [s for s in task_specs(cfg) if parse_rung(s.rung)[0] not in ("L0", "L1")]
    parts = []
    for spec in specs:
        for sigma in [spec.sigma, *cfg["predict"]["noisy_sigmas"]]:
            if sigma < spec.sigma:
                continue
            if (spec.task_id, float(sigma)) not in of:
                raise ValueError(
                    f"the predict spectra have no P_attn spectrum of task {spec.task_id} at "
                    f"σ = {sigma:g}: rerun the predict stage of this config"
                )
            s = np.asarray(of[spec.task_id, float(sigma)], dtype=np.float64)[None]
            key = {
                "class": spec.rung,
                "value_map": spec.value_map,
                "predictor": "P_attn",
                "n": spec.n,
                "d": spec.d,
                "sigma": sigma,
                "beta": spec.beta if parse_rung(spec.rung)[0] != "L3" else np.nan,
                "r_star": spec.r_star,
                "seed": spec.seed,
            }
            for est in estimators:
                parts.append({**key, "estimator": est, "r_hat": float(estimate(s, est)[0])})
    return pd.DataFrame(parts)


def summarise(rows: pd.DataFrame, kind: str) -> pd.DataFrame:
    """Exact rate and mean |err| per KEYS × estimator (pooling r* and seeds)."""
    out = []
    if rows.empty:
        return pd.DataFrame(columns=COLUMNS)
    for key, g in rows.groupby([*KEYS, "estimator"], dropna=False, sort=True):
        s = exact_summary(g["r_hat"], g["r_star"])
        out.append(
            {
                "spectra": kind,
                **dict(zip([*KEYS, "estimator"], key)),
                "cases": s["n"],
                "exact_rate": s["exact_rate"],
                "mean_abs_error": s["mean_abs_error"],
            }
        )
    return pd.DataFrame(out, columns=COLUMNS)


def floor_aware_table(cfg: dict, clip: float, progress=None, spectra=None) -> pd.DataFrame:
    """X3: the frontier (held-out seeds) and the ladder (from the predict stage's ``spectra``,
    needed when ``exploratory.floor_aware.ladder``), every estimator of
    ``exploratory.floor_aware.estimators``. Columns: :data:`COLUMNS`."""
    fa = cfg["exploratory"]["floor_aware"]
    ests = fa["estimators"]
    front = frontier_rows(
        cfg["frontier"],
        fa["seeds"],
        cfg["seed"],
        ests,
        clip,
        progress,
        fa.get("p_attn_sigma", "linear"),
    )
    if fa["ladder"] and spectra is None:
        raise ValueError("X3's ladder reads the predict stage's spectra; none were given")
    ladder = ladder_rows(cfg, ests, spectra) if fa["ladder"] else pd.DataFrame()
    return pd.concat([summarise(front, FRONTIER), summarise(ladder, LADDER)], ignore_index=True)


def pooled(table: pd.DataFrame, kind: str, cls: str, estimator: str, keep_n=None) -> float:
    """Exact rate of ``estimator`` over the P_attn rows of ``cls`` in ``kind`` (case-weighted);
    ``keep_n``: a filter on n (e.g. n > d)."""
    g = table[
        (table["spectra"] == kind)
        & (table["class"] == cls)
        & (table["predictor"] == "P_attn")
        & (table["estimator"] == estimator)
    ]
    if keep_n is not None:
        g = g[keep_n(g["n"])]
    return float((g["exact_rate"] * g["cases"]).sum() / g["cases"].sum()) if len(g) else np.nan


def floor_aware_decision(table: pd.DataFrame) -> dict:
    """The pre-stated rule applied to X3's held-out rows: whether ``predict`` should read
    softmax-like data with the floor-aware rank. Returns the rates and ``adopt``."""
    d = int(table.loc[table["spectra"] == FRONTIER, "d"].max())
    above = lambda n: n > d  # noqa: E731
    l4 = {e: pooled(table, FRONTIER, "L4", e, above) for e in ("energy_0.99", "floor")}
    l3 = {e: pooled(table, FRONTIER, "L3", e, above) for e in ("energy_0.99", "floor")}
    adopt = bool(
        l4["floor"] >= l4["energy_0.99"] + DECISION_MARGIN
        and l3["floor"] >= l3["energy_0.99"] - DECISION_L3_SLACK
    )
    return {"L4": l4, "L3": l3, "adopt": adopt}
