"""The heads study's figures (exploratory; drawn only here, saved by rule ``heads_report``):
H1, every head's truncation knee against each estimator of its three spectra; H2, the
training curve."""

from __future__ import annotations

import numpy as np
import pandas as pd

from entropic_bound.heads.ranks import SPECTRA, estimator_columns

#: row labels: the spectrum each estimator reads (docs/method.md §9)
SHORT = {"qk": "(a) W_Qᵀ W_K", "logit": "(b) logit field", "pattn": "(c) P_attn"}
#: the heads' figures' matplotlib settings (also the pretrained heads' figure)
RC = {"font.size": 8, "pdf.fonttype": 42, "svg.hashsalt": "entropic-bound"}


def figure_knees(table: pd.DataFrame, agree: pd.DataFrame, taus):
    """H1: rows (a) W_Qᵀ W_K, (b) logit field, (c) P_attn; columns r_E(τ)…, stable rank and the
    floor-aware rank (left out when no spectrum has a floor: it is "not applicable" there, NaN);
    one point per head, colour = layer; y = x dashed."""
    import matplotlib as mpl
    import seaborn as sns
    from matplotlib.figure import Figure

    ests = [
        e
        for e in estimator_columns(taus)
        if any(table[f"{spectrum}_{e}"].notna().any() for spectrum in SPECTRA)
    ]
    agree = agree[agree["set"] == "with_knee"]
    has = table[np.isfinite(table["knee"])]
    layers = sorted(table["layer"].unique())
    colors = dict(zip(layers, sns.color_palette("viridis", len(layers)), strict=True))
    top = float(table["d_head"].max())
    with mpl.rc_context(RC):
        fig = Figure(figsize=(2.0 * len(ests) + 0.6, 6.2), layout="constrained")
        axes = fig.subplots(len(SPECTRA), len(ests), squeeze=False, sharey=True)
        for i, spectrum in enumerate(SPECTRA):
            for j, est in enumerate(ests):
                ax, col = axes[i, j], f"{spectrum}_{est}"
                ax.plot([0, top], [0, top], "--", color="0.6", lw=0.8)
                for layer in layers:
                    g = has[has["layer"] == layer]
                    ax.scatter(
                        g[col], g["knee"], s=14, alpha=0.8, color=colors[layer], label=f"L{layer}"
                    )
                a = agree[agree["column"] == col].iloc[0]
                title = (
                    f"exact {a['exact']:.2f}, ±1 {a['within1']:.2f}"
                    if a["heads"]
                    else "not applicable (no floor)"
                )
                ax.set_title(title, fontsize=7)
                if i == len(SPECTRA) - 1:
                    ax.set_xlabel(est.replace("energy_", "r_E "))
                if j == 0:
                    ax.set_ylabel(f"{SHORT[spectrum]}\nknee")
        handles, labels = axes[0, 0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside right center", frameon=False, title="layer")
        fig.suptitle("Truncation knee against each estimator (exploratory, no verdict)")
    return fig


def figure_curve(curve: pd.DataFrame):
    """H2: training and validation loss (nats per byte) against step."""
    import matplotlib as mpl
    from matplotlib.figure import Figure

    with mpl.rc_context(RC):
        fig = Figure(figsize=(4.2, 2.8), layout="constrained")
        ax = fig.subplots()
        ax.plot(curve["step"], curve["train_loss"], label="train (window mean)")
        ax.plot(curve["step"], curve["valid_loss"], label="validation")
        ax.set_xlabel("step")
        ax.set_ylabel("loss (nats / byte)")
        ax.legend(frameon=False)
        ax.set_title(f"final validation loss {curve['valid_loss'].iloc[-1]:.3f}")
    return fig
