"""Shared look of the figures: print sizes, palettes, rung labels and small axis helpers.

Used by every figure's module (f1_deficiency.py …); the package re-exports the public names.
"""

from __future__ import annotations

import functools

import matplotlib as mpl
import numpy as np
import seaborn as sns

from entropic_bound.core.rungs import parse_rung, sort_rungs

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
