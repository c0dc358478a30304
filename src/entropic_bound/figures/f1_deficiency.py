"""F1 deficiency & achievability (docs/method.md §6): drawn from cached tables by :func:`draw`; its inputs, rule,
report category and caption are its ``FigureSpec`` in figures/spec.py."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from entropic_bound.core.rungs import sort_rungs
from entropic_bound.figures.style import (
    RISK_FLOOR,
    _empty,
    _styled,
    r_star_palette,
    rung_title,
)


@_styled
def figure_F1(curves: pd.DataFrame, t2: pd.DataFrame, epsilon: float) -> Figure:
    """F1: relative excess risk against student rank, one panel per rung (own class).

    ``curves``: risk_curves.csv (median R over seeds per task × rank, R_theory);
    ``t2``: T2_intrinsic_ranks.csv (r_emp per task). Lines: median R per task, coloured by r*;
    dashed: the tail energy R*(r) of the teacher spectrum (exact for L0, approximate for L3,
    a reference elsewhere); dotted verticals: r*; triangles: the knee r_emp; grey: ε.
    """
    own = curves[
        (~curves["static_student"].astype(bool)) & (curves["student_class"] == curves["rung"])
    ]
    rungs = sort_rungs(own["rung"]) if not own.empty else []
    ncol = min(4, max(1, len(rungs)))
    nrow = max(1, -(-len(rungs) // ncol))
    fig = Figure(figsize=(1.9 * ncol + 0.9, 1.85 * nrow + 0.9), layout="constrained")
    axes = np.atleast_1d(fig.subplots(nrow, ncol, sharex=True, sharey=True, squeeze=False)).ravel()
    if not rungs:
        _empty(axes[0], "no trained students")
        return fig
    pal = r_star_palette(own["r_star"])
    knees = t2.set_index("task_id")["r_emp"] if "r_emp" in t2 else pd.Series(dtype=float)
    for ax, rung in zip(axes, rungs):
        g = own[own["rung"] == rung]
        _student_lines(ax, g, pal, knees)
        _theory_lines(ax, g, pal)
        _finish_panel(ax, rung, epsilon)
    _shared_axes(fig, axes, own, len(rungs), epsilon)
    fig.legend(handles=_legend_handles(pal, epsilon), loc="outside right center", frameon=False)
    return fig


def _student_lines(ax, g: pd.DataFrame, pal: dict, knees: pd.Series) -> None:
    """One rung's students: median R per task with its seed band, and a triangle at the knee."""
    for (task, r_star), t in g.groupby(["task_id", "r_star"]):
        t = t.sort_values("rank")
        c = pal[int(r_star)]
        ax.plot(t["rank"], t["R"].clip(lower=RISK_FLOOR), color=c, lw=1.2, alpha=0.85)
        ax.fill_between(
            t["rank"],
            t["R_lo"].clip(lower=RISK_FLOOR),
            t["R_hi"].clip(lower=RISK_FLOOR),
            color=c,
            alpha=0.12,
            lw=0,
        )
        k = knees.get(task, np.nan)
        if np.isfinite(k):
            rk = t.loc[t["rank"] == k, "R"]
            ax.plot(
                [k],
                [max(float(rk.iloc[0]), RISK_FLOOR) if len(rk) else RISK_FLOOR],
                marker="v",
                ms=6,
                mec="black",
                mew=0.6,
                color=c,
                zorder=5,
                ls="none",
            )


def _theory_lines(ax, g: pd.DataFrame, pal: dict) -> None:
    """One rung's tail energy R*(r) per r* (median over tasks) and a dotted vertical at r*."""
    theory = g.groupby(["r_star", "rank"])["R_theory"].median().reset_index()
    for r_star, t in theory.groupby("r_star"):
        t = t[t["R_theory"] > 0]
        if len(t):  # on top of the students: where they coincide, the bound is tight
            ax.plot(
                t["rank"],
                t["R_theory"],
                color="black",
                ls="--",
                lw=0.9,
                marker="_",
                ms=7,
                zorder=4,
            )
        ax.axvline(r_star, color=pal[int(r_star)], ls=":", lw=1.0)


def _finish_panel(ax, rung: str, epsilon: float) -> None:
    """ε, the log scale and the rung's title (and how exact its theory line is)."""
    note = {"L0": "theory exact", "L3": "theory approx."}
    ax.axhline(epsilon, color="0.45", lw=0.9, ls="-.")
    ax.set_yscale("log")
    ax.set_title(rung_title(rung) + (f" ({note[rung]})" if rung in note else ""))
    ax.grid(True, which="major", lw=0.3, alpha=0.5)


def _shared_axes(fig: Figure, axes, own: pd.DataFrame, used: int, epsilon: float) -> None:
    """Hide the unused panels; the shared limits, rank ticks and axis labels."""
    for ax in axes[used:]:
        ax.set_visible(False)
    ymax = max(1.0, float(own["R_hi"].max()) * 1.5)
    ymin = max(RISK_FLOOR, min(float(own["R_lo"].min()), epsilon) / 3)
    axes[0].set_ylim(ymin / 1.5, ymax)
    ranks = sorted(own["rank"].unique())
    axes[0].set_xticks(ranks if len(ranks) <= 8 else ranks[:: max(1, len(ranks) // 8)])
    fig.supxlabel("student rank r (rank of the learned kernel Q Kᵀ)")
    fig.supylabel("relative excess risk R (test, median over seeds)")


def _legend_handles(pal: dict, epsilon: float) -> list:
    handles = [Line2D([], [], color=c, lw=1.5, label=f"r* = {r}") for r, c in pal.items()]
    handles += [
        Line2D(
            [],
            [],
            color="black",
            ls="--",
            label="tail energy R*(r)\n(exact L0, approx. L3,\nreference elsewhere)",
        ),
        Line2D([], [], color="0.3", ls=":", label="r* (teacher)"),
        Line2D([], [], color="0.45", ls="-.", label=f"ε = {epsilon:g}"),
        Line2D([], [], color="0.5", marker="v", mec="black", ls="none", label="knee r_emp"),
    ]
    return handles


def draw(t: dict, c: dict) -> Figure:
    """F1 from its tables (``t``: stem -> DataFrame, the spec's inputs) and config/claims.yaml (``c``)."""
    return figure_F1(t["risk_curves"], t["T2_intrinsic_ranks"], c["epsilon"])
