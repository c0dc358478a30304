"""F7 prediction vs knee (docs/method.md §6): drawn from cached tables by :func:`draw`; its inputs, rule,
report category and caption are its ``FigureSpec`` in figures/spec.py."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from entropic_bound.core.rungs import sort_rungs
from entropic_bound.figures.style import (
    _empty,
    _jitter,
    _styled,
    rung_palette,
    rung_title,
)


@_styled
def figure_F7(t2: pd.DataFrame) -> Figure:
    """F7: data-only predictions (P_static, P_attn at σ = 0) against the trained knee r_emp on
    every task, and the knee against r*. ``t2``: T2_intrinsic_ranks.csv.

    Filled circles: the prediction equals r*; crosses: it does not. A task without a knee
    (no rank reached ε) sits in the column marked 'none'.
    """
    fig = Figure(figsize=(7.4, 2.9), layout="constrained")
    axes = fig.subplots(1, 3)
    rungs = sort_rungs(t2["rung"])
    pal = rung_palette(rungs)
    top = float(np.nanmax(t2[["r_star", "P_static", "P_attn", "r_emp"]].to_numpy(float)))
    none_x = top + 1.0
    emp = t2["r_emp"].fillna(none_x)
    no_training = t2["r_emp"].isna().all()
    specs = [("P_static", "data-only P_static"), ("P_attn", "data-only P_attn")]
    for ax, (col, label) in zip(axes[:2], specs):
        if no_training:
            _empty(ax, "no trained knees")
            continue
        _prediction_panel(ax, t2, emp, col, label, rungs, pal)
    if no_training:
        _empty(axes[2], "no trained knees")
    else:
        _knee_panel(axes[2], t2, emp, rungs, pal)
        _shared_ticks(axes, t2, top, none_x)
    fig.legend(handles=_legend_handles(rungs, pal), loc="outside right center", frameon=False)
    return fig


def _prediction_panel(ax, t2: pd.DataFrame, emp, col: str, label: str, rungs, pal) -> None:
    """One predictor against the knee, per rung: circles where it equals r*, crosses not."""
    for i, rung in enumerate(rungs):
        sel = t2["rung"] == rung
        g = t2[sel]
        xs = emp[sel] + _jitter(sel.sum(), 0.18, i)
        ys = g[col] + _jitter(sel.sum(), 0.18, i + 50)
        hit = (g[col] == g["r_star"]).to_numpy()
        ax.scatter(
            xs[hit],
            ys[hit],
            color=pal[rung],
            s=18,
            marker="o",
            label=rung,
            edgecolor="white",
            linewidth=0.3,
        )
        ax.scatter(xs[~hit], ys[~hit], color=pal[rung], s=22, marker="x", linewidth=1.0)
    ax.set_xlabel("trained knee r_emp (rank)")
    ax.set_ylabel(f"{label} (rank)")
    ax.set_title(f"{col} vs knee")


def _knee_panel(ax, t2: pd.DataFrame, emp, rungs, pal) -> None:
    """The knee against r*, per rung."""
    for i, rung in enumerate(rungs):
        sel = t2["rung"] == rung
        ax.scatter(
            t2.loc[sel, "r_star"] + _jitter(sel.sum(), 0.18, i),
            emp[sel] + _jitter(sel.sum(), 0.18, i + 99),
            color=pal[rung],
            s=18,
            edgecolor="white",
            linewidth=0.3,
        )
    ax.set_xlabel("teacher rank r*")
    ax.set_ylabel("trained knee r_emp (rank)")
    ax.set_title("knee vs r*")


def _shared_ticks(axes, t2: pd.DataFrame, top: float, none_x: float) -> None:
    """Equal rank ticks on both axes (the knee's with a 'none' column where a task has none),
    and the diagonal y = x."""
    has_none = bool(t2["r_emp"].isna().any())
    step = max(1, int(top) // 6)
    ticks = list(range(1, int(top) + 1, step))
    hi = top + 0.6
    for j, ax in enumerate(axes):
        knee_on_x = j < 2
        ax.set_xlim(0.4, (none_x if has_none and knee_on_x else top) + 0.6)
        ax.set_ylim(0.4, (none_x if has_none and not knee_on_x else top) + 0.6)
        extra = [none_x] if has_none else []
        labels = [str(v) for v in ticks] + (["none"] if has_none else [])
        if knee_on_x:
            ax.set_xticks(ticks + extra, labels)
            ax.set_yticks(ticks)
        else:
            ax.set_xticks(ticks)
            ax.set_yticks(ticks + extra, labels)
        ax.plot([0.4, hi], [0.4, hi], color="0.3", ls="--", lw=0.9, zorder=1)
        ax.grid(True, lw=0.3, alpha=0.5)


def _legend_handles(rungs, pal: dict) -> list:
    handles = [
        Line2D([], [], color=pal[r], marker="o", ls="none", label=rung_title(r)) for r in rungs
    ]
    handles += [
        Line2D([], [], color="0.3", marker="o", ls="none", label="prediction = r*"),
        Line2D([], [], color="0.3", marker="x", ls="none", label="prediction ≠ r*"),
        Line2D([], [], color="0.3", ls="--", label="y = x"),
    ]
    return handles


def draw(t: dict, c: dict) -> Figure:
    """F7 from its tables (``t``: stem -> DataFrame, the spec's inputs) and config/claims.yaml (``c``)."""
    return figure_F7(t["T2_intrinsic_ranks"])
