"""F5 estimator robustness (docs/method.md §6): drawn from cached tables by :func:`draw`; its inputs, rule,
report category and caption are its ``FigureSpec`` in figures/spec.py."""

from __future__ import annotations

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure

from entropic_bound.analysis import pretty_estimator
from entropic_bound.figures.style import (
    _empty,
    _styled,
)


@_styled
def figure_F5(
    t3: pd.DataFrame, claims_estimator: str, by_beta: pd.DataFrame | None = None
) -> Figure:
    """F5: mean |estimate − r*| per estimator, linear (L3) vs softmax (L4) attention, for the
    learned full-rank kernels and the data-only P_attn. ``t3``: T3_estimators.csv.

    With ``by_beta`` (X2_c8_by_beta.csv, exploratory: no verdict) a second row shows the same
    error against β on softmax attention, learned and data-only kernels.
    """
    kinds = list(dict.fromkeys(t3["kernels"])) if not t3.empty else []
    beta_kinds = (
        list(dict.fromkeys(by_beta["kernels"])) if by_beta is not None and len(by_beta) else []
    )
    ncol = max(len(kinds), len(beta_kinds), 1)
    nrow = 2 if beta_kinds else 1
    fig = Figure(figsize=(3.4 * ncol + 0.6, 3.3 * nrow), layout="constrained")
    grid = fig.subplots(nrow, ncol, squeeze=False)
    axes = grid[0]
    if beta_kinds:
        _by_beta_panels(grid[1], by_beta, beta_kinds, claims_estimator)
    if not kinds:
        _empty(axes[0], "no estimator table")
        return fig
    order = list(dict.fromkeys(t3["estimator"]))
    for ax, kind in zip(axes, kinds):
        _estimator_panel(ax, t3[t3["kernels"] == kind], kind, order, claims_estimator)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=2, frameon=False)
    fig.suptitle(
        f"labels above bars: exact rate (rounded); highlighted: {pretty_estimator(claims_estimator)}",
        fontsize=8,
    )
    return fig


def _estimator_panel(ax, g: pd.DataFrame, kind: str, order: list, claims_estimator: str) -> None:
    """F5's first row, one kernel kind: a bar per estimator, linear beside softmax attention,
    each labelled with its exact rate; the claims' estimator highlighted."""
    pal = {"linear": "tab:blue", "softmax": "tab:red"}
    w = 0.38
    for j, mix in enumerate(("linear", "softmax")):
        m = g[g["mixing"] == mix].set_index("estimator").reindex(order)
        xs = np.arange(len(order)) + (j - 0.5) * w
        rung = m["rung"].dropna().iloc[0] if m["rung"].notna().any() else mix
        ax.bar(
            xs,
            m["mean_abs_error"],
            width=w,
            color=pal[mix],
            alpha=0.85,
            label=f"{mix} attention ({rung})",
        )
        for xi, (err, rate) in zip(xs, zip(m["mean_abs_error"], m["exact_rate"])):
            if np.isfinite(err):
                ax.text(
                    xi, err, f" {rate:.0%}", ha="center", va="bottom", fontsize=6.5, rotation=90
                )
    ax.set_xticks(
        np.arange(len(order)), [pretty_estimator(e) for e in order], rotation=35, ha="right"
    )
    i = order.index(claims_estimator) if claims_estimator in order else None
    if i is not None:
        ax.get_xticklabels()[i].set_fontweight("bold")
        ax.axvspan(i - 0.5, i + 0.5, color="gold", alpha=0.2, lw=0, zorder=0)
    ax.set_title(kind)
    ax.set_ylabel("mean |estimate − r*| (rank units)")
    ax.margins(y=0.22)
    ax.grid(True, axis="y", lw=0.3, alpha=0.5)


def _by_beta_panels(axes, by_beta: pd.DataFrame, kinds: list, claims_estimator: str) -> None:
    """F5's second row: mean |error| of every estimator against β, one panel per kernel kind."""
    order = list(dict.fromkeys(by_beta["estimator"]))
    colors = dict(zip(order, sns.color_palette("colorblind", len(order))))
    for ax, kind in zip(axes, kinds):
        g = by_beta[by_beta["kernels"] == kind]
        for est in order:
            e = g[g["estimator"] == est].sort_values("beta")
            ours = est == claims_estimator
            ax.plot(
                e["beta"],
                e["mean_abs_error"],
                color="black" if ours else colors[est],
                lw=2.2 if ours else 1.1,
                marker="o",
                ms=3.5,
                label=pretty_estimator(est),
                zorder=5 if ours else 3,
            )
        ax.set_xscale("log", base=2)
        ax.set_xticks(sorted(g["beta"].unique()), [f"{b:g}" for b in sorted(g["beta"].unique())])
        ax.set_xlabel("inverse temperature β (L4)")
        ax.set_ylabel("mean |estimate − r*| (rank units)")
        ax.set_title(f"{kind}\nby β (exploratory: no verdict)")
        ax.grid(True, lw=0.3, alpha=0.5)
    for ax in axes[len(kinds) :]:
        ax.set_visible(False)
    axes[0].legend(fontsize=7, frameon=False, title=f"black: {pretty_estimator(claims_estimator)}")


def draw(t: dict, c: dict) -> Figure:
    """F5 from its tables (``t``: stem -> DataFrame, the spec's inputs) and config/claims.yaml (``c``)."""
    return figure_F5(t["T3_estimators"], c["estimator"], t.get("X2_c8_by_beta"))
