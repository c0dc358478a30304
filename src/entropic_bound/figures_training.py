"""Figures of the trained students (SCIENCE.md §6): F1 deficiency & achievability, F2 recovery,
F4 the ladder, F5 estimator robustness.

Each takes DataFrames (the tables named in its docstring) and returns a matplotlib ``Figure``;
:mod:`.plotting` re-exports them and draws them by id.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from .analysis import full_rank_students, pretty_estimator, sort_rungs
from .plot_style import (
    RISK_FLOOR,
    _empty,
    _jitter,
    _styled,
    r_star_palette,
    rung_label,
    rung_title,
)
from .rungs import ladder_lambda

# ---------------------------------------------------------------- F1 deficiency & achievability


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
    note = {"L0": "theory exact", "L3": "theory approx."}
    for ax, rung in zip(axes, rungs):
        g = own[own["rung"] == rung]
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
        ax.axhline(epsilon, color="0.45", lw=0.9, ls="-.")
        ax.set_yscale("log")
        ax.set_title(rung_title(rung) + (f" ({note[rung]})" if rung in note else ""))
        ax.grid(True, which="major", lw=0.3, alpha=0.5)
    for ax in axes[len(rungs) :]:
        ax.set_visible(False)
    ymax = max(1.0, float(own["R_hi"].max()) * 1.5)
    ymin = max(RISK_FLOOR, min(float(own["R_lo"].min()), epsilon) / 3)
    axes[0].set_ylim(ymin / 1.5, ymax)
    ranks = sorted(own["rank"].unique())
    axes[0].set_xticks(ranks if len(ranks) <= 8 else ranks[:: max(1, len(ranks) // 8)])
    fig.supxlabel("student rank r (rank of the learned kernel Q Kᵀ)")
    fig.supylabel("relative excess risk R (test, median over seeds)")
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
    fig.legend(handles=handles, loc="outside right center", frameon=False)
    return fig


# ---------------------------------------------------------------- F2 recovery


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
        for rec in g.itertuples(index=False):
            s = np.sort(np.asarray(rec.spectrum, float))[::-1]
            s = s / s[0] if s[0] > 0 else s
            top.plot(
                np.arange(1, len(s) + 1),
                np.clip(s, 1e-6, None),
                color=pal[int(rec.r_star)],
                lw=1.0,
                alpha=0.7,
                marker=".",
                ms=3,
            )
        for r in sorted(g["r_star"].unique()):
            top.axvline(r, color=pal[int(r)], ls=":", lw=1.0)
        top.set_yscale("log")
        top.set_title(f"{rung}: learned spectrum")
        top.set_xlabel("singular value index i")
        dyn = dynamics[dynamics["rung"] == rung]
        for (_task, _seed), t in dyn.groupby(["task_id", "seed"]):
            t = t.sort_values("step")
            bot.plot(
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
            bot.axhline(r, color=pal[int(r)], ls=":", lw=1.0)
        bot.set_title(f"{rung}: {name} over training")
        bot.set_xlabel("training step")
        if dyn.empty:
            _empty(bot, "no checkpoints")
        for ax in (top, bot):
            ax.grid(True, lw=0.3, alpha=0.5)
    axes[0, 0].set_ylabel("s_i / s_1 of learned Q Kᵀ")
    axes[1, 0].set_ylabel(f"{name} of learned Q Kᵀ")
    handles = [Line2D([], [], color=c, lw=1.5, label=f"r* = {r}") for r, c in pal.items()]
    handles += [Line2D([], [], color="0.3", ls=":", label="r* (teacher)")]
    fig.legend(handles=handles, loc="outside right center", frameon=False)
    return fig


# ---------------------------------------------------------------- F4 the ladder


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
    rows = [
        ("P_static_err", "|P_static − r*| (rank units)", False),
        ("static_fit_share", "static-fit share s₁²/Σs²", False),
        ("static_student_R", "static-student R", True),
    ]
    t = t2.assign(P_static_err=(t2["P_static_raw"] - t2["r_star"]).abs())
    mean = ladder.set_index("rung") if not ladder.empty else pd.DataFrame()
    for ax, (col, label, log) in zip(axes, rows):
        vals = t.dropna(subset=[col])
        if vals.empty:
            _empty(ax, f"no {col.replace('_', ' ')} (training tables absent)")
            ax.set_ylabel(label)
            continue
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
    if "P_static_exact_rate" in mean:
        for r in rungs:
            if r in mean.index and np.isfinite(mean.loc[r, "P_static_exact_rate"]):
                axes[0].annotate(
                    f"{mean.loc[r, 'P_static_exact_rate']:.0%}",
                    (x[r], 1.0),
                    xycoords=("data", "axes fraction"),
                    ha="center",
                    va="bottom",
                    fontsize=7,
                    color="tab:blue",
                )
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


# ---------------------------------------------------------------- F5 estimator robustness


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
    pal = {"linear": "tab:blue", "softmax": "tab:red"}
    for ax, kind in zip(axes, kinds):
        g = t3[t3["kernels"] == kind]
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
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=2, frameon=False)
    fig.suptitle(
        f"labels above bars: exact rate (rounded); highlighted: {pretty_estimator(claims_estimator)}",
        fontsize=8,
    )
    return fig


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
