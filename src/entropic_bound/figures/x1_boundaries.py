"""X1 frontier boundaries (docs/method.md §6): drawn from cached tables by :func:`draw`; its inputs, rule,
report category and caption are its ``FigureSpec`` in figures/spec.py."""

from __future__ import annotations

import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from entropic_bound.figures.style import (
    _empty,
    _styled,
)

#: line style of P_invert and its linear twin
_STYLE = {"P_invert": "-", "P_invert_linear": "--"}


@_styled
def figure_X1(bt: pd.DataFrame) -> Figure:
    """X1 (exploratory: no verdict): σ50 relative to the clean output's std. Left, middle:
    against the data budget B at n = the two budget-sweep n, P_invert (solid) beside its linear
    twin (dashed), one colour per β. Right: against β at the frontier's B, every predictor with
    a tolerance. A σ50 of 0 (not exact even clean) sits on the floor. ``bt``: X1_boundaries.csv.
    """
    fig = Figure(figsize=(9.6, 3.2), layout="constrained")
    axes = fig.subplots(1, 3)
    if bt.empty:
        _empty(axes[0], "no boundaries computed")
        return fig
    floor = (
        float(bt.loc[bt["sigma50_rel"] > 0, "sigma50_rel"].min()) / 3
        if (bt["sigma50_rel"] > 0).any()
        else 1e-6
    )
    betas = sorted(bt.loc[bt["beta"].notna(), "beta"].unique())
    pal = dict(zip(betas, sns.color_palette("viridis", len(betas))))
    sweep_n = sorted(bt.loc[~bt["frontier_budget"].astype(bool), "n"].unique())
    for ax, n in zip(axes[:2], (sweep_n + [None, None])[:2]):
        if n is None:
            _empty(ax, "no budget sweep")
            continue
        _budget_panel(ax, bt, n, floor, pal)
    _beta_panel(axes[2], bt, floor)
    handles = [Line2D([], [], color=c, lw=1.5, label=f"β = {b:g}") for b, c in pal.items()]
    handles += [
        Line2D([], [], color="0.3", ls="-", label="P_invert"),
        Line2D([], [], color="0.3", ls="--", label="linear twin\n(no log)"),
    ]
    fig.legend(handles=handles, loc="outside right center", frameon=False)
    fig.suptitle(
        "Frontier boundaries (exploratory: no verdict): largest σ with exact rate ≥ 50 %",
        fontsize=9,
    )
    return fig


def _budget_panel(ax, bt: pd.DataFrame, n: int, floor: float, pal: dict) -> None:
    """σ50 against the data budget B at one n: P_invert and its twin, one line per β."""
    Bs = sorted(bt["n_seqs"].unique())
    g = bt[(bt["n"] == n) & bt["predictor"].isin(_STYLE)]
    for (pred, beta), c in g.groupby(["predictor", "beta"]):
        c = c.sort_values("n_seqs")
        if len(c) < 2:
            continue
        ax.plot(
            c["n_seqs"],
            c["sigma50_rel"].clip(lower=floor),
            ls=_STYLE[pred],
            color=pal.get(beta, "0.3"),
            marker="o",
            ms=3,
            lw=1.2,
        )
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(Bs, [str(b) for b in Bs], rotation=45)
    ax.set_xlabel("data budget B (sequences)")
    ax.set_title(f"n = {n}, against the data budget")
    ax.set_ylabel("σ50 / std(clean output)")
    ax.grid(True, which="major", lw=0.3, alpha=0.5)


def _beta_panel(ax, bt: pd.DataFrame, floor: float) -> None:
    """σ50 against β at the frontier's B: every curve exact when clean (rate ≥ 0.5)."""
    main = bt[bt["frontier_budget"].astype(bool)]
    main = main[main["beta"].notna() & (main["rate_clean"] >= 0.5)]
    for (pred, _cls, vm, n), c in main.groupby(["predictor", "class", "value_map", "n"]):
        c = c.sort_values("beta")
        ax.plot(
            c["beta"],
            c["sigma50_rel"].clip(lower=floor),
            marker="o",
            ms=3,
            lw=1.1,
            ls=_STYLE.get(pred, ":"),
            label=f"{pred}, n = {n}" + (f", V {vm}" if pred == "P_attn" else ""),
        )
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    if len(main):
        bs = sorted(main["beta"].unique())
        ax.set_xticks(bs, [f"{b:g}" for b in bs])
    ax.set_xlabel("inverse temperature β")
    ax.set_ylabel("σ50 / std(clean output)")
    ax.set_title(f"by β at B = {int(main['n_seqs'].iloc[0]) if len(main) else '-'}")
    ax.grid(True, which="major", lw=0.3, alpha=0.5)
    ax.legend(fontsize=6, frameon=False)


def draw(t: dict, c: dict) -> Figure:
    """X1 from its tables (``t``: stem -> DataFrame, the spec's inputs) and config/claims.yaml (``c``)."""
    return figure_X1(t["X1_boundaries"])
