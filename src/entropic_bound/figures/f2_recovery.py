"""F2 recovery (docs/method.md §6): drawn from cached tables by :func:`draw`; its inputs, rule,
report category and caption are its ``FigureSpec`` in figures/spec.py."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from entropic_bound.analysis import full_rank_students, pretty_estimator
from entropic_bound.core.rungs import sort_rungs
from entropic_bound.figures.style import (
    _empty,
    _styled,
    r_star_palette,
)


@_styled
def figure_F2(
    metrics: pd.DataFrame, dynamics: pd.DataFrame, estimator: str, rungs=("L0", "L3", "L4")
) -> Figure:
    """F2: what GD learns at full rank, per rung: final learned spectra s_i/s_1 (log scale)
    and the estimated rank over training steps.

    ``metrics``: train_metrics.parquet (spectrum of every student); ``dynamics``:
    rank_dynamics.csv (estimator of the learned kernel per checkpoint, full-rank students).
    """
    full = full_rank_students(metrics)
    present = [r for r in rungs if (full["rung"] == r).any()] or sort_rungs(full["rung"])[:3]
    ncol = max(1, len(present))
    fig = Figure(figsize=(2.3 * ncol + 0.9, 4.3), layout="constrained")
    axes = fig.subplots(2, ncol, squeeze=False)
    if not present:
        _empty(axes[0, 0], "no full-rank students")
        return fig
    pal = r_star_palette(full["r_star"])
    name = pretty_estimator(estimator)
    for j, rung in enumerate(present):
        top, bot = axes[0, j], axes[1, j]
        g = full[full["rung"] == rung]
        _spectrum_panel(top, g, rung, pal)
        _dynamics_panel(bot, dynamics[dynamics["rung"] == rung], g, rung, pal, name)
        for ax in (top, bot):
            ax.grid(True, lw=0.3, alpha=0.5)
    axes[0, 0].set_ylabel("s_i / s_1 of learned Q Kᵀ")
    axes[1, 0].set_ylabel(f"{name} of learned Q Kᵀ")
    handles = [Line2D([], [], color=c, lw=1.5, label=f"r* = {r}") for r, c in pal.items()]
    handles += [Line2D([], [], color="0.3", ls=":", label="r* (teacher)")]
    fig.legend(handles=handles, loc="outside right center", frameon=False)
    return fig


def _spectrum_panel(ax, g: pd.DataFrame, rung: str, pal: dict) -> None:
    """Every full-rank student's final spectrum s_i/s_1 (log scale), dotted at r*."""
    for rec in g.itertuples(index=False):
        s = np.sort(np.asarray(rec.spectrum, float))[::-1]
        s = s / s[0] if s[0] > 0 else s
        ax.plot(
            np.arange(1, len(s) + 1),
            np.clip(s, 1e-6, None),
            color=pal[int(rec.r_star)],
            lw=1.0,
            alpha=0.7,
            marker=".",
            ms=3,
        )
    for r in sorted(g["r_star"].unique()):
        ax.axvline(r, color=pal[int(r)], ls=":", lw=1.0)
    ax.set_yscale("log")
    ax.set_title(f"{rung}: learned spectrum")
    ax.set_xlabel("singular value index i")


def _dynamics_panel(ax, dyn: pd.DataFrame, g: pd.DataFrame, rung: str, pal: dict, name) -> None:
    """The estimated rank of each student over training steps (``dyn``: its checkpoints)."""
    for (_task, _seed), t in dyn.groupby(["task_id", "seed"]):
        t = t.sort_values("step")
        ax.plot(
            t["step"],
            t["r_hat"],
            color=pal[int(t["r_star"].iloc[0])],
            lw=1.0,
            alpha=0.75,
            marker="o",
            ms=2.5,
            drawstyle="steps-post",
        )
    for r in sorted(g["r_star"].unique()):
        ax.axhline(r, color=pal[int(r)], ls=":", lw=1.0)
    ax.set_title(f"{rung}: {name} over training")
    ax.set_xlabel("training step")
    if dyn.empty:
        _empty(ax, "no checkpoints")


def draw(t: dict, c: dict) -> Figure:
    """F2 from its tables (``t``: stem -> DataFrame, the spec's inputs) and config/claims.yaml (``c``)."""
    return figure_F2(
        t["train_metrics"], t["rank_dynamics"], c["estimator"], rungs=("L0", *c["C7"]["rungs"])
    )
