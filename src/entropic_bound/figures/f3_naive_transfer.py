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
    offs = np.linspace(-0.25, 0.25, max(len(rungs), 1))
    for i, rung in enumerate(rungs):
        g = t2[t2["rung"] == rung]
        ax1.scatter(
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
    ax1.plot(
        [0.5, ytop], [0.5, ytop], color="0.3", ls="--", lw=0.9, label="P_static = r*", zorder=1
    )
    ax1.set_xlim(0.5, xtop)
    ax1.set_ylim(0.5, ytop)
    ax1.set_xticks(sorted(t2["r_star"].unique()))
    ax1.set_xlabel("teacher rank r* (points offset per rung)")
    ax1.set_ylabel("P_static (data-only, rounded)")
    ax1.set_title("(a) static prediction vs r*")
    ax1.legend(frameon=False, fontsize=7, ncol=2, loc="upper left")
    ax1.grid(True, lw=0.3, alpha=0.5)

    x = np.arange(len(rungs))
    risk = t2.dropna(subset=["static_student_R"])
    if risk.empty:
        _empty(ax2, "no static students trained")
    else:
        for i, rung in enumerate(rungs):
            g = risk[risk["rung"] == rung]["static_student_R"].clip(lower=RISK_FLOOR)
            ax2.scatter(
                i + _jitter(len(g), 0.12, i),
                g,
                color=pal[rung],
                s=16,
                zorder=3,
                edgecolor="white",
                linewidth=0.4,
            )
            if len(g):
                ax2.plot([i - 0.3, i + 0.3], [g.median()] * 2, color="black", lw=1.2)
        if min_static_risk is not None:
            ax2.axhline(
                min_static_risk,
                color="firebrick",
                ls="--",
                lw=0.9,
                label=f"C5 threshold R = {min_static_risk:g}",
            )
            ax2.legend(frameon=False, loc="upper left")
        ax2.set_yscale("log")
        ax2.set_xticks(x, [rung_label(r) for r in rungs])
        ax2.set_ylabel("static-student R (best of L0, L1)")
        ax2.set_xlabel("task rung (bar: median over tasks)")
        ax2.grid(True, axis="y", lw=0.3, alpha=0.5)
    ax2.set_title("(b) best static weight kernel")
    return fig


def draw(t: dict, c: dict) -> Figure:
    """F3 from its tables (``t``: stem -> DataFrame, the spec's inputs) and config/claims.yaml (``c``)."""
    return figure_F3(t["T2_intrinsic_ranks"], c["C5"]["min_static_student_risk"])
