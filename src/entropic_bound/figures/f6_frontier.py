"""F6 predictability frontier (docs/method.md §6): drawn from cached tables by :func:`draw`; its inputs, rule,
report category and caption are its ``FigureSpec`` in figures/spec.py."""

from __future__ import annotations

import matplotlib as mpl
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure

from entropic_bound.analysis import pretty_estimator
from entropic_bound.figures.style import (
    _empty,
    _styled,
)


def _pooled(t4: pd.DataFrame, rows: str, cols: str) -> pd.DataFrame:
    """Exact rate pooled over everything but ``rows`` × ``cols`` (weighted by cases)."""
    g = t4.assign(hits=t4["exact_rate"] * t4["n_cases"]).groupby([rows, cols])
    out = (g["hits"].sum() / g["n_cases"].sum()).rename("rate").reset_index()
    return out.pivot(index=rows, columns=cols, values="rate").sort_index(ascending=False)


@_styled
def figure_F6(t4: pd.DataFrame, estimator: str) -> Figure:
    """F6: exact-recovery heatmaps of the data-only predictors over the frontier grid.

    Rows: value map unknown / known, then P_invert (value known, n ≤ d). Columns: n × σ
    (L3), n × σ (L4, pooled over β), n × β (L4, σ = 0). ``t4``: T4_frontier.csv.
    """
    t = t4[t4["estimator"] == estimator]
    fig = Figure(figsize=(7.4, 7.6), layout="constrained")
    axes = fig.subplots(3, 3)
    cmap = sns.color_palette("viridis", as_cmap=True)
    d = int(t["d"].iloc[0]) if len(t) else None
    for ax, (df, rows, cols, title) in zip(axes.ravel(), _panels(t)):
        _heatmap(ax, df, rows, cols, title, cmap)
    sm = mpl.cm.ScalarMappable(norm=mpl.colors.Normalize(0, 100), cmap=cmap)
    fig.colorbar(
        sm,
        ax=axes,
        shrink=0.5,
        label=f"exact rate (%) of {pretty_estimator(estimator)} = r* (r*, seeds pooled)",
    )
    if d is not None:
        fig.suptitle(f"Data-only predictability frontier (d = {d}; n ≥ 2d = {2 * d} is 'at scale')")
    return fig


def _panels(t: pd.DataFrame) -> list[tuple[pd.DataFrame, str, str, str]]:
    """The nine panels, row by row: (rows of ``t``, heatmap rows, heatmap columns, title)."""
    panels = []
    for vm in ("unknown", "known"):
        base = t[(t["predictor"] == "P_attn") & (t["value_map"] == vm)]
        panels += [
            (base[base["class"] == "L3"], "n", "sigma", f"L3 P_attn, V {vm}"),
            (base[base["class"] == "L4"], "n", "sigma", f"L4 P_attn, V {vm} (all β)"),
            (
                base[(base["class"] == "L4") & np.isclose(base["sigma"], 0)],
                "n",
                "beta",
                f"L4 P_attn, V {vm}, σ = 0",
            ),
        ]
    inv = t[t["predictor"] == "P_invert"]
    stat = t[(t["predictor"] == "P_static") & (t["value_map"] == "unknown")]
    panels += [
        (inv, "n", "sigma", "L4 P_invert, V known (all β)"),
        (inv[np.isclose(inv["sigma"], 0)], "n", "beta", "L4 P_invert, V known, σ = 0"),
        (stat[stat["class"] == "L3"], "n", "sigma", "L3 P_static, V unknown"),
    ]
    return panels


def _heatmap(ax, df: pd.DataFrame, rows: str, cols: str, title: str, cmap) -> None:
    """One panel: the pooled exact rate in percent over ``rows`` × ``cols``."""
    ax.set_title(title)
    if df.empty:
        _empty(ax, "not in this grid")
        return
    m = 100 * _pooled(df, rows, cols)  # percent: short labels that fit narrow cells
    sns.heatmap(
        m,
        ax=ax,
        vmin=0,
        vmax=100,
        cmap=cmap,
        annot=True,
        fmt=".0f",
        cbar=False,
        annot_kws={"fontsize": 7},
        linewidths=0.4,
        linecolor="white",
    )
    ax.set_xticklabels([f"{float(v.get_text()):g}" for v in ax.get_xticklabels()], rotation=0)
    ax.set_yticklabels(ax.get_yticklabels(), rotation=0)
    ax.set_xlabel({"sigma": "noise σ", "beta": "inverse temperature β"}[cols])
    ax.set_ylabel("n (tokens)")


def draw(t: dict, c: dict) -> Figure:
    """F6 from its tables (``t``: stem -> DataFrame, the spec's inputs) and config/claims.yaml (``c``)."""
    return figure_F6(t["T4_frontier"], c["estimator"])
