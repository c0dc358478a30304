"""'Beyond the verdicts': one line per exploratory result for claims.md (docs/method.md §8).

Reads the exploratory tables (X1_boundaries, X2_c8_by_beta); never a verdict, never a
threshold. Each line says what was measured and where, in numbers.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from entropic_bound.analysis import pretty_estimator

HEADER = "## Beyond the verdicts (exploratory: no verdict)"


def _g(x: float) -> str:
    if x is None or (isinstance(x, float) and np.isnan(x)):
        return "n/a"
    if np.isinf(x):
        return "> grid"
    return "0" if x == 0 else f"{x:.2g}"


def _span(values: pd.Series) -> str:
    v = values.dropna()
    if v.empty:
        return "n/a"
    lo, hi = float(v.min()), float(v.max())
    return _g(lo) if lo == hi else f"{_g(lo)}–{_g(hi)}"


def boundary_lines(bt: pd.DataFrame) -> list[str]:
    """σ50 of each predictor at the frontier's budget, and P_invert against the budget B."""
    if bt is None or bt.empty:
        return ["* frontier boundaries: not computed in this config"]
    lines = []
    main = bt[bt["frontier_budget"].astype(bool)]
    B = int(main["n_seqs"].iloc[0]) if len(main) else None
    names = {
        "P_invert": "P_invert (V known)",
        "P_invert_linear": "its linear twin (no log, logits β X A Xᵀ/√d)",
        "P_invert_V=I": "P_invert assuming V = I on value-unknown data",
    }
    for pred, label in names.items():
        g = main[main["predictor"] == pred]
        if g.empty:
            continue
        parts = [
            f"n = {int(n)}: σ50 {_span(c['sigma50'])} (relative {_span(c['sigma50_rel'])}), "
            f"clean exact rate {_span(c['rate_clean'])}"
            for n, c in g.groupby("n")
        ]
        lines.append(f"* {label}, B = {B}, over β: " + "; ".join(parts))
    inv = bt[bt["predictor"].isin(["P_invert", "P_invert_linear"])]
    sweep = inv.groupby(["predictor", "n", "beta"])["n_seqs"].nunique()
    if len(sweep) and sweep.max() > 1:
        for pred in ("P_invert", "P_invert_linear"):
            for (n, beta), c in inv[inv["predictor"] == pred].groupby(["n", "beta"]):
                if c["n_seqs"].nunique() < 2:
                    continue
                c = c.sort_values("n_seqs")
                lines.append(
                    f"* {pred} σ50 against the data budget at n = {int(n)}, β = {beta:g}: "
                    + ", ".join(f"B = {int(b)}: {_g(s)}" for b, s in zip(c["n_seqs"], c["sigma50"]))
                )
    att = main[main["predictor"] == "P_attn"]
    for (cls, vm), g in att.groupby(["class", "value_map"]):
        parts = [f"n = {int(n)}: {_span(c['sigma50'])}" for n, c in g.groupby("n")]
        lines.append(f"* P_attn on {cls}, V {vm}, B = {B}, σ50 over β: " + "; ".join(parts))
    return lines


def c8_beta_lines(xb: pd.DataFrame, estimator: str) -> list[str]:
    """Per kernel kind: the claims estimator's mean |err| and exact rate by β, the best other."""
    if xb is None or xb.empty:
        return ["* C8 by β: not computed in this config"]
    lines = []
    for kind, g in xb.groupby("kernels", sort=False):
        parts = []
        for beta, b in g.groupby("beta"):
            ours = b[b["estimator"] == estimator]
            others = b[b["estimator"] != estimator].sort_values("mean_abs_error")
            if ours.empty:
                continue
            o = ours.iloc[0]
            text = f"β = {beta:g}: {_g(o['mean_abs_error'])} ({o['exact_rate']:.0%} exact)"
            if len(others):
                best = others.iloc[0]
                text += (
                    f", best other {pretty_estimator(best['estimator'])} "
                    f"{_g(best['mean_abs_error'])}"
                )
            parts.append(text)
        lines.append(
            f"* C8 by β, {kind}: {pretty_estimator(estimator)} mean |err| " + "; ".join(parts)
        )
    return lines


def beyond_the_verdicts(
    boundaries: pd.DataFrame | None, c8_by_beta: pd.DataFrame | None, estimator: str
) -> str:
    """The claims.md section: a heading, a one-line caveat, one line per result."""
    lines = [
        HEADER,
        "",
        "Not pre-registered, so no verdict and no threshold: tables `X1_boundaries.csv` "
        "(σ50: the largest σ with exact rate ≥ 50 %; 0 = not exact even clean) and "
        "`X2_c8_by_beta.csv`.",
        "",
        *boundary_lines(boundaries),
        *c8_beta_lines(c8_by_beta, estimator),
        "",
    ]
    return "\n".join(lines)
