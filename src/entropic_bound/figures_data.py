"""Figures of the data and the predictors (SCIENCE.md §6): F3 naive transfer, F6 predictability
frontier, F7 prediction vs knee, X1 frontier boundaries.

Each takes DataFrames (the tables named in its docstring) and returns a matplotlib ``Figure``;
:mod:`.plotting` re-exports them and draws them by id.
"""

from __future__ import annotations

import matplotlib as mpl
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from .analysis import pretty_estimator, sort_rungs
from .plot_style import (
    RISK_FLOOR,
    _empty,
    _jitter,
    _styled,
    rung_label,
    rung_palette,
    rung_title,
)

# ---------------------------------------------------------------- F3 naive transfer


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


# ---------------------------------------------------------------- F6 predictability frontier


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
    panels = []
    for i, vm in enumerate(("unknown", "known")):
        base = t[(t["predictor"] == "P_attn") & (t["value_map"] == vm)]
        panels += [
            (axes[i, 0], base[base["class"] == "L3"], "n", "sigma", f"L3 P_attn, V {vm}"),
            (axes[i, 1], base[base["class"] == "L4"], "n", "sigma", f"L4 P_attn, V {vm} (all β)"),
            (
                axes[i, 2],
                base[(base["class"] == "L4") & np.isclose(base["sigma"], 0)],
                "n",
                "beta",
                f"L4 P_attn, V {vm}, σ = 0",
            ),
        ]
    inv = t[t["predictor"] == "P_invert"]
    stat = t[(t["predictor"] == "P_static") & (t["value_map"] == "unknown")]
    panels += [
        (axes[2, 0], inv, "n", "sigma", "L4 P_invert, V known (all β)"),
        (axes[2, 1], inv[np.isclose(inv["sigma"], 0)], "n", "beta", "L4 P_invert, V known, σ = 0"),
        (axes[2, 2], stat[stat["class"] == "L3"], "n", "sigma", "L3 P_static, V unknown"),
    ]
    for ax, df, rows, cols, title in panels:
        ax.set_title(title)
        if df.empty:
            _empty(ax, "not in this grid")
            continue
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


# ---------------------------------------------------------------- F7 prediction vs knee


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
    ax = axes[2]
    if no_training:
        _empty(ax, "no trained knees")
    else:
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
    has_none = bool(t2["r_emp"].isna().any()) and not no_training
    step = max(1, int(top) // 6)
    ticks = list(range(1, int(top) + 1, step))
    hi = top + 0.6
    for j, ax in enumerate(axes):
        if no_training:
            continue
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
    handles = [
        Line2D([], [], color=pal[r], marker="o", ls="none", label=rung_title(r)) for r in rungs
    ]
    handles += [
        Line2D([], [], color="0.3", marker="o", ls="none", label="prediction = r*"),
        Line2D([], [], color="0.3", marker="x", ls="none", label="prediction ≠ r*"),
        Line2D([], [], color="0.3", ls="--", label="y = x"),
    ]
    fig.legend(handles=handles, loc="outside right center", frameon=False)
    return fig


# ---------------------------------------------------------------- X1 frontier boundaries


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
    Bs = sorted(bt["n_seqs"].unique())
    sweep_n = sorted(bt.loc[~bt["frontier_budget"].astype(bool), "n"].unique())
    style = {"P_invert": "-", "P_invert_linear": "--"}
    for ax, n in zip(axes[:2], (sweep_n + [None, None])[:2]):
        if n is None:
            _empty(ax, "no budget sweep")
            continue
        g = bt[(bt["n"] == n) & bt["predictor"].isin(style)]
        for (pred, beta), c in g.groupby(["predictor", "beta"]):
            c = c.sort_values("n_seqs")
            if len(c) < 2:
                continue
            ax.plot(
                c["n_seqs"],
                c["sigma50_rel"].clip(lower=floor),
                ls=style[pred],
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
    ax = axes[2]
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
            ls=style.get(pred, ":"),
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
