"""The pretrained heads' figure (rule ``pretrained_study``): per model, every head's knee by
layer under both truncations, with the per-layer median of each estimator beside them."""

from __future__ import annotations

import numpy as np
import pandas as pd

from entropic_bound.heads.figure import RC

#: the estimators drawn beside the knees: column -> label
ESTIMATORS = {
    "kernel_0.99": "W_Qᵀ W_K r_E(0.99)",
    "field_0.9": "logit field r_E(0.9)",
    "pattn_0.9": "P_attn r_E(0.9)",
    "predict_rank": "predict",
}


def figure_pretrained(heads: pd.DataFrame):
    """One panel per model: x the layer (heads spread within it), y the rank; filled dots the
    plain knee, open circles the inputs' metric knee, lines the estimators' layer medians (an
    estimator above d_head, or missing, is named in the panel instead of drawn)."""
    import matplotlib as mpl
    import seaborn as sns
    from matplotlib.figure import Figure

    models = list(dict.fromkeys(heads["model"]))
    colors = dict(zip(ESTIMATORS, sns.color_palette("colorblind", len(ESTIMATORS)), strict=True))
    with mpl.rc_context(RC):
        fig = Figure(figsize=(3.4 * len(models), 3.3), layout="constrained")
        axes = fig.subplots(1, len(models), squeeze=False)[0]
        for ax, model in zip(axes, models, strict=True):
            g = heads[heads["model"] == model]
            width = g["head"].max() + 1
            x = g["layer"] + (g["head"] + 0.5) / width * 0.8 - 0.4
            ax.scatter(x, g["knee_plain"], s=6, color="k", label="knee (plain)")
            ax.scatter(
                x,
                g["knee_inputs_metric"],
                s=14,
                facecolors="none",
                edgecolors="tab:red",
                linewidths=0.6,
                label="knee (inputs' metric)",
            )
            d_head = int(g["d_head"].iloc[0])
            off = []
            for col, label in ESTIMATORS.items():
                med = g.groupby("layer")[col].median()
                if not np.isfinite(med).any():
                    off.append(f"{label}: none")
                elif g[col].median() > d_head:  # beyond any QK rank of the head: named, not drawn
                    off.append(f"{label}: median {g[col].median():g}, above d_head")
                else:
                    ax.plot(med.index, med.to_numpy(), color=colors[col], lw=1, label=label)
            if off:
                ax.text(0.02, 0.02, "\n".join(off), transform=ax.transAxes, fontsize=6)
            ax.set_ylim(-1, d_head + 1)
            ax.set_title(f"{model} (d_head {d_head}, {len(g)} heads)")
            ax.set_xlabel("layer")
        axes[0].set_ylabel("QK rank")
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside lower center", ncol=len(labels), fontsize=6)
    return fig
