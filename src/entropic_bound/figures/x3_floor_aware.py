"""X3 the floor-aware rank (docs/method.md §6, §8): drawn from cached tables by :func:`draw`; its
inputs, rule, report category and caption are its ``FigureSpec`` in figures/spec.py."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from entropic_bound.figures.style import _empty, _styled

#: the spectra sets of X3 (exploratory/floor_aware.py names them; figures never import a later stage)
FRONTIER = "frontier (held-out seeds)"
LADDER = "ladder (paper tasks)"
#: line style per estimator (r_E(0.99) solid, the floor-aware rank dashed)
_STYLE = {"energy_0.99": "-", "floor": "--"}


def _rate(g: pd.DataFrame) -> float:
    """Case-weighted exact rate of a group of X3 rows."""
    return float((g["exact_rate"] * g["cases"]).sum() / g["cases"].sum())


def _lines(ax, rows: pd.DataFrame, by: str, colour_by: str, colours: dict) -> None:
    """Exact rate against ``by``, one line per (``colour_by``, estimator): colour, style."""
    for (key, est), g in rows.groupby([colour_by, "estimator"]):
        pts = sorted((x, _rate(c)) for x, c in g.groupby(by))
        if pts:
            x, y = zip(*pts)
            ax.plot(
                x,
                y,
                ls=_STYLE.get(est, ":"),
                marker="o",
                ms=3,
                lw=1.2,
                color=colours.get(key, "0.3"),
                label=f"{key}, {est}",
            )
    ax.set_ylim(-0.03, 1.03)
    ax.set_ylabel("exact rate")
    ax.grid(True, lw=0.3, alpha=0.5)
    ax.legend(fontsize=6, frameon=False)


@_styled
def figure_X3(x3: pd.DataFrame) -> Figure:
    """X3 (exploratory: no verdict): exact rate of r_E(0.99) (solid) and the floor-aware rank
    (dashed) on P_attn, value maps pooled (P_attn is value-free). Left: L4 on the held-out
    frontier by β (n > d); middle: L3 and L4 by n; right: the ladder by rung."""
    fig = Figure(figsize=(10.5, 3.3), layout="constrained")
    axes = fig.subplots(1, 3)
    front = x3[(x3["spectra"] == FRONTIER) & (x3["predictor"] == "P_attn")]
    colours = {"L3": "C0", "L4": "C1"}
    if front.empty:
        for ax in axes[:2]:
            _empty(ax, "no held-out frontier rows")
    else:
        l4 = front[front["class"] == "L4"]
        _lines(axes[0], l4[l4["n"] > l4["d"]], "beta", "class", colours)
        axes[0].set_xscale("log", base=2)
        axes[0].set_xlabel("β (L4, n > d)")
        axes[0].set_title("softmax attention by β")
        _lines(axes[1], front, "n", "class", colours)
        axes[1].set_xscale("log", base=2)
        axes[1].set_xlabel("n (tokens)")
        axes[1].set_title("by n (β, σ pooled)")
    ladder = x3[x3["spectra"] == LADDER]
    ax = axes[2]
    if ladder.empty:
        _empty(ax, "no ladder rows")
    else:
        rungs = list(dict.fromkeys(ladder["class"]))
        ests = list(dict.fromkeys(ladder["estimator"]))
        width = 0.8 / max(1, len(ests))
        for i, est in enumerate(ests):
            y = [
                _rate(ladder[(ladder["class"] == r) & (ladder["estimator"] == est)]) for r in rungs
            ]
            ax.bar(np.arange(len(rungs)) + i * width, y, width, label=est)
        ax.set_xticks(np.arange(len(rungs)) + width * (len(ests) - 1) / 2, rungs, rotation=45)
        ax.set_ylim(0, 1.03)
        ax.set_title("ladder: P_attn on the config's tasks")
        ax.legend(fontsize=6, frameon=False)
    fig.suptitle(
        "The floor-aware rank (dashed) beside r_E(0.99) (solid); exploratory: no verdict",
        fontsize=9,
    )
    return fig


def draw(t: dict, c: dict) -> Figure:
    """X3 from its tables (``t``: stem -> DataFrame) and config/claims.yaml (``c``)."""
    return figure_X3(t["X3_floor_aware"])
