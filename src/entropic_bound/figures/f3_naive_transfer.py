"""F3 naive transfer (docs/method.md §6): drawn from cached tables by :func:`draw`; its inputs, rule,
report category and caption are its ``FigureSpec`` in figures/spec.py."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from entropic_bound.core.rungs import sort_rungs
from entropic_bound.figures.style import (
    RISK_FLOOR,
    _empty,
    _jitter,
    _styled,
    rung_label,
    rung_palette,
    rung_title,
)


@_styled
def figure_F3(t2: pd.DataFrame, min_static_risk: float | None = None) -> Figure:
    """F3: the naive transfer. (a) P_static against r* per rung (σ = 0); (b) the static
    students' relative excess risk per rung. ``t2``: T2_intrinsic_ranks.csv."""
    fig = Figure(figsize=(7.2, 3.2), layout="constrained")
    ax1, ax2 = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1, 1.25]})
    rungs = sort_rungs(t2["rung"])
    pal = rung_palette(rungs)
    _prediction_panel(ax1, t2, rungs, pal)
    risk = t2.dropna(subset=["static_student_R"])
    if risk.empty:
        _empty(ax2, "no static students trained")
    else:
        _risk_panel(ax2, risk, rungs, pal, min_static_risk)
    ax2.set_title("(b) best static weight kernel")
    return fig


def _prediction_panel(ax, t2: pd.DataFrame, rungs, pal: dict) -> None:
    """(a) P_static against r*, the rungs side by side at each r*, and the diagonal."""
    offs = np.linspace(-0.25, 0.25, max(len(rungs), 1))
    for i, rung in enumerate(rungs):
        g = t2[t2["rung"] == rung]
        ax.scatter(
            g["r_star"] + offs[i],
            g["P_static"],
            color=pal[rung],
            s=18,
            label=rung_title(rung),
            edgecolor="white",
            linewidth=0.4,
            zorder=3,
        )
    ytop = max(float(t2[["r_star", "P_static"]].max().max()), 1) + 0.7
    xtop = float(t2["r_star"].max()) + 0.7
    ax.plot([0.5, ytop], [0.5, ytop], color="0.3", ls="--", lw=0.9, label="P_static = r*", zorder=1)
    ax.set_xlim(0.5, xtop)
    ax.set_ylim(0.5, ytop)
    ax.set_xticks(sorted(t2["r_star"].unique()))
    ax.set_xlabel("teacher rank r* (points offset per rung)")
    ax.set_ylabel("P_static (data-only, rounded)")
    ax.set_title("(a) static prediction vs r*")
    ax.legend(frameon=False, fontsize=7, ncol=2, loc="upper left")
    ax.grid(True, lw=0.3, alpha=0.5)


def _risk_panel(ax, risk: pd.DataFrame, rungs, pal: dict, min_static_risk) -> None:
    """(b) every task's static-student R per rung, its median, and C5's threshold."""
    for i, rung in enumerate(rungs):
        g = risk[risk["rung"] == rung]["static_student_R"].clip(lower=RISK_FLOOR)
        ax.scatter(
            i + _jitter(len(g), 0.12, i),
            g,
            color=pal[rung],
            s=16,
            zorder=3,
            edgecolor="white",
            linewidth=0.4,
        )
        if len(g):
            ax.plot([i - 0.3, i + 0.3], [g.median()] * 2, color="black", lw=1.2)
    if min_static_risk is not None:
        ax.axhline(
            min_static_risk,
            color="firebrick",
            ls="--",
            lw=0.9,
            label=f"C5 threshold R = {min_static_risk:g}",
        )
        ax.legend(frameon=False, loc="upper left")
    ax.set_yscale("log")
    ax.set_xticks(np.arange(len(rungs)), [rung_label(r) for r in rungs])
    ax.set_ylabel("static-student R (best of L0, L1)")
    ax.set_xlabel("task rung (bar: median over tasks)")
    ax.grid(True, axis="y", lw=0.3, alpha=0.5)


def draw(t: dict, c: dict) -> Figure:
    """F3 from its tables (``t``: stem -> DataFrame, the spec's inputs) and config/claims.yaml (``c``)."""
    return figure_F3(t["T2_intrinsic_ranks"], c["C5"]["min_static_student_risk"])
