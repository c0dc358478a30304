"""Figures F1–F7 (SCIENCE.md §6) from cached analysis tables; PNG and PDF, readable in print.

Each ``figure_F*`` takes DataFrames (the tables named in its docstring) and returns a
matplotlib ``Figure``; :func:`save_figure` writes it atomically with the run's provenance in
the file metadata. No pyplot: figures are plain ``Figure`` objects, so no GUI backend and no
global state is involved.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from .estimators import energy_tau
from .figure_registry import FIGURES
from .figures_data import figure_F3, figure_F6, figure_F7, figure_X1
from .figures_training import figure_F1, figure_F2, figure_F4, figure_F5
from .io import atomic_path
from .plot_style import RC, RISK_FLOOR, r_star_palette, rung_label, rung_palette, rung_title

#: the public names, including those re-exported from the modules the figures moved to
__all__ = [
    "DRAW",
    "FIGURES",
    "RC",
    "RISK_FLOOR",
    "SPECTRUM_SUFFIXES",
    "figure_F1",
    "figure_F2",
    "figure_F3",
    "figure_F4",
    "figure_F5",
    "figure_F6",
    "figure_F7",
    "figure_X1",
    "make_figure",
    "r_star_palette",
    "rung_label",
    "rung_palette",
    "rung_title",
    "save_figure",
    "save_spectrum_plot",
]


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
