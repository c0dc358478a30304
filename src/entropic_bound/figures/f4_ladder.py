"""F4 the ladder (docs/method.md §6): drawn from cached tables by :func:`draw`; its inputs, rule,
report category and caption are its ``FigureSpec`` in figures/spec.py."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from entropic_bound.core.rungs import ladder_lambda, sort_rungs
from entropic_bound.figures.style import (
    RISK_FLOOR,
    _empty,
    _jitter,
    _styled,
    rung_label,
)

#: F4's rows: (column of T2, axis label, log scale)
_ROWS = (
    ("P_static_err", "|P_static − r*| (rank units)", False),
    ("static_fit_share", "static-fit share s₁²/Σs²", False),
    ("static_student_R", "static-student R", True),
)


@_styled
def figure_F4(t2: pd.DataFrame, ladder: pd.DataFrame) -> Figure:
    """F4: the ladder L0 → L1 → L2 → Lλ → L4 (and L3 apart): static-prediction error,
    static-fit share and static-student R per rung, one column per rung.

    ``t2``: T2_intrinsic_ranks.csv (per-task points); ``ladder``: ladder.csv (per-rung means).
    """
    rungs = sort_rungs(t2["rung"])
    x = {r: i + (0.6 if r == "L3" else 0.0) for i, r in enumerate(rungs)}
    fig = Figure(figsize=(6.4, 6.2), layout="constrained")
    axes = fig.subplots(3, 1, sharex=True)
    t = t2.assign(P_static_err=(t2["P_static_raw"] - t2["r_star"]).abs())
    mean = ladder.set_index("rung") if not ladder.empty else pd.DataFrame()
    for ax, (col, label, log) in zip(axes, _ROWS):
        _ladder_row(ax, t, col, label, log, rungs, x)
    if "P_static_exact_rate" in mean:
        _exact_rates(axes[0], mean, rungs, x)
    axes[0].set_title("exact rate of P_static = r* above each rung", fontsize=8, pad=12)
    handles, labels = axes[-1].get_legend_handles_labels()
    if handles:
        axes[-1].legend(handles, labels, frameon=False, loc="upper left")
    lad = [r for r in rungs if ladder_lambda(r) is not None]
    if lad:  # shade the λ ladder L2 (λ = 0) → L4 (λ = 1) in every panel
        for ax in axes:
            ax.axvspan(x[lad[0]] - 0.4, x[lad[-1]] + 0.4, color="tab:blue", alpha=0.05, lw=0)
    axes[-1].set_xticks([x[r] for r in rungs], [rung_label(r) for r in rungs])
    axes[-1].set_xlabel(
        "rung: static linear → static softmax → static QK → input-conditioned (λ) → softmax attention"
    )
    return fig


def _ladder_row(ax, t: pd.DataFrame, col: str, label: str, log: bool, rungs, x: dict) -> None:
    """One quantity per rung: every task (grey), the ladder's mean (blue), L3's apart."""
    vals = t.dropna(subset=[col])
    if vals.empty:
        _empty(ax, f"no {col.replace('_', ' ')} (training tables absent)")
        ax.set_ylabel(label)
        return
    for r in rungs:
        g = vals[vals["rung"] == r][col]
        if log:
            g = g.clip(lower=RISK_FLOOR)
        ax.scatter(
            x[r] + _jitter(len(g), 0.1, len(r)),
            g,
            s=14,
            color="0.55",
            zorder=2,
            edgecolor="white",
            linewidth=0.3,
        )
    per = vals.groupby("rung")[col].mean()
    on = [r for r in rungs if r != "L3" and r in per.index]
    ax.plot(
        [x[r] for r in on],
        [per[r] for r in on],
        color="tab:blue",
        marker="o",
        lw=1.6,
        zorder=3,
        label="ladder mean",
    )
    if "L3" in per.index:
        ax.plot(
            [x["L3"]],
            [per["L3"]],
            color="tab:orange",
            marker="s",
            ls="none",
            zorder=3,
            label="L3 (linear attention, off the ladder)",
        )
    if log:
        ax.set_yscale("log")
    ax.set_ylabel(label)
    ax.grid(True, axis="y", lw=0.3, alpha=0.5)


def _exact_rates(ax, mean: pd.DataFrame, rungs, x: dict) -> None:
    """The exact rate of P_static = r* above each rung's column (ladder.csv)."""
    for r in rungs:
        if r in mean.index and np.isfinite(mean.loc[r, "P_static_exact_rate"]):
            ax.annotate(
                f"{mean.loc[r, 'P_static_exact_rate']:.0%}",
                (x[r], 1.0),
                xycoords=("data", "axes fraction"),
                ha="center",
                va="bottom",
                fontsize=7,
                color="tab:blue",
            )


def draw(t: dict, c: dict) -> Figure:
    """F4 from its tables (``t``: stem -> DataFrame, the spec's inputs) and config/claims.yaml (``c``)."""
    return figure_F4(t["T2_intrinsic_ranks"], t["ladder"])
