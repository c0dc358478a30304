"""Figures F1–F7 (SCIENCE.md §6) from cached analysis tables; PNG and PDF, readable in print.

Each ``figure_F*`` takes DataFrames (the tables named in its docstring) and returns a
matplotlib ``Figure``; :func:`save_figure` writes it atomically with the run's provenance in
the file metadata. No pyplot: figures are plain ``Figure`` objects, so no GUI backend and no
global state is involved.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import matplotlib as mpl
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from .analysis import full_rank_students, pretty_estimator, sort_rungs
from .estimators import energy_tau
from .figure_registry import FIGURES  # noqa: F401  (re-exported: ids, stems, tables)
from .io import atomic_path
from .rungs import ladder_lambda, parse_rung

#: display floor of relative risks on log axes (a risk of exactly 0 has no place on them)
RISK_FLOOR = 1e-6
RC = {
    "font.size": 9,
    "axes.titlesize": 9,
    "axes.labelsize": 9,
    "legend.fontsize": 8,
    "legend.title_fontsize": 8,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "savefig.dpi": 200,
    "pdf.fonttype": 42,
    "svg.hashsalt": "entropic-bound",
}


def _styled(fn):
    """Draw inside seaborn's 'ticks' style and our print sizes, leaving global state alone."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with sns.axes_style("ticks"), mpl.rc_context(RC):
            return fn(*args, **kwargs)

    return wrapper


def r_star_palette(r_stars) -> dict:
    """One colour per r* (ordered), colour-blind safe."""
    r_stars = sorted({int(r) for r in r_stars})
    colors = sns.color_palette("colorblind", max(len(r_stars), 3))
    return {r: colors[i] for i, r in enumerate(r_stars)}


def rung_palette(rungs) -> dict:
    rungs = sort_rungs(rungs)
    colors = sns.color_palette("tab10", max(len(rungs), 3))
    return {r: colors[i] for i, r in enumerate(rungs)}


def rung_label(rung: str) -> str:
    """Tick label of a rung: ``Lam0.50`` -> ``Lλ\\nλ=0.5``; L2/L4 carry their λ."""
    cls, lam = parse_rung(rung)
    if cls == "Lam":
        return f"Lλ\nλ={lam:g}"
    return {"L2": "L2\nλ=0", "L4": "L4\nλ=1"}.get(rung, rung)


def rung_title(rung: str) -> str:
    """Panel title of a rung: ``Lam0.50`` -> ``Lλ (λ = 0.5)``."""
    cls, lam = parse_rung(rung)
    return f"Lλ (λ = {lam:g})" if cls == "Lam" else rung


def _empty(ax, text: str) -> None:
    ax.text(
        0.5,
        0.5,
        text,
        ha="center",
        va="center",
        transform=ax.transAxes,
        fontsize=8,
        color="0.4",
        wrap=True,
    )
    ax.set_xticks([])
    ax.set_yticks([])


def _jitter(n: int, width: float, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-width, width, n)


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


# ---------------------------------------------------------------- writing


def save_figure(fig: Figure, png, pdf, provenance: dict | None = None, dpi: int = 200) -> None:
    """Write ``fig`` as PNG and PDF atomically (temp name + os.replace), provenance in metadata.

    PNG: text chunk ``entropic_bound`` (JSON); PDF: the ``Subject`` field (JSON). The PDF's
    creation date is dropped so that the same figure is the same file.
    """
    stamp = json.dumps(provenance or {}, sort_keys=True, default=str)
    title = Path(png).stem
    with atomic_path(png, ".png") as tmp:
        fig.savefig(tmp, format="png", dpi=dpi, metadata={"Title": title, "entropic_bound": stamp})
    with atomic_path(pdf, ".pdf") as tmp:
        fig.savefig(
            tmp, format="pdf", metadata={"Title": title, "Subject": stamp, "CreationDate": None}
        )


#: figure id -> how to draw it from its tables (FIGURES: stems and tables) and claims.yaml
DRAW = {
    "F1": lambda t, c: figure_F1(t["risk_curves"], t["T2_intrinsic_ranks"], c["epsilon"]),
    "F2": lambda t, c: figure_F2(
        t["train_metrics"], t["rank_dynamics"], c["estimator"], rungs=("L0", *c["C7"]["rungs"])
    ),
    "F3": lambda t, c: figure_F3(t["T2_intrinsic_ranks"], c["C5"]["min_static_student_risk"]),
    "F4": lambda t, c: figure_F4(t["T2_intrinsic_ranks"], t["ladder"]),
    "F5": lambda t, c: figure_F5(t["T3_estimators"], c["estimator"], t.get("X2_c8_by_beta")),
    "F6": lambda t, c: figure_F6(t["T4_frontier"], c["estimator"]),
    "F7": lambda t, c: figure_F7(t["T2_intrinsic_ranks"]),
    "X1": lambda t, c: figure_X1(t["X1_boundaries"]),
}


def make_figure(fig_id: str, tables: dict[str, pd.DataFrame], claims: dict) -> Figure:
    """Draw figure ``fig_id`` from its tables (keys: the stems of :data:`FIGURES`) and the
    claim settings (estimator, ε, C2/C5/C7 thresholds) of config/claims.yaml."""
    if fig_id not in DRAW:
        raise ValueError(f"unknown figure {fig_id!r}; choose one of {', '.join(FIGURES)}")
    return DRAW[fig_id](tables, claims)


# --------------------------------------------------------------------------- `predict --plot`

#: image types `entropic-bound predict --plot` writes (matplotlib's Agg formats)
SPECTRUM_SUFFIXES = ("eps", "jpeg", "jpg", "pdf", "png", "ps", "svg", "svgz", "tif", "tiff", "webp")


def save_spectrum_plot(path, preds: dict, rec: dict) -> None:
    """Normalised spectra of every predictor that ran (the trusted one bold, the cut marked) and
    the trusted one's cumulative energy, written atomically to ``path`` (its suffix: the type).

    ``preds``, ``rec``: the "predictors" and "recommendation" of a predict report."""
    fmt = Path(path).suffix.lower().lstrip(".")
    if fmt not in SPECTRUM_SUFFIXES:
        raise ValueError(f"unknown image type {fmt or '(none)'!r}")
    fig = Figure(figsize=(10, 4))
    ax, ax2 = fig.subplots(1, 2)
    trusted, r = rec["predictor"], rec["min_qk_rank"]
    for name, p in preds.items():
        if p.get("status") != "ok":
            continue
        s = np.asarray(p["spectrum"], dtype=float)
        k = np.arange(1, len(s) + 1)
        top = s[0] if len(s) and s[0] > 0 else 1.0
        bold = name == trusted
        label = name + (" (trusted)" if bold else "")
        ax.plot(
            k,
            np.maximum(s / top, 1e-16),
            marker="o",
            ms=3,
            lw=2.5 if bold else 1,
            alpha=1 if bold else 0.5,
            label=label,
        )
        if bold:
            e = np.cumsum(s**2) / max(np.sum(s**2), 1e-300)
            ax2.plot(k, e, marker="o", ms=3, color="C0", label=f"{name}: cumulative energy")
    for a in (ax, ax2):
        a.axvline(r + 0.5, color="k", ls="--", lw=1, label=f"cut: rank {r} ({rec['estimator']})")
        a.set_xlabel("index k (singular value rank)")
    if (tau := energy_tau(rec["estimator"])) is not None:
        ax2.axhline(tau, color="gray", ls=":", lw=1, label=f"τ = {tau:g}")
    ax.set_yscale("log")
    ax.set_ylabel(r"singular value $s_k / s_1$")
    ax2.set_ylabel(r"cumulative energy $\Sigma_{i \leq k}\, s_i^2 \;/\; \Sigma_i\, s_i^2$")
    ax.set_title("Predicted kernel spectra")
    ax2.set_title(f"Recommended minimum QK rank: {r}")
    ax.legend(fontsize=8)
    ax2.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format=fmt, dpi=120)
