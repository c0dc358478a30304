"""``entropic-bound predict --plot``: the spectra a recommendation was read from, as an image."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from entropic_bound.core.estimators import energy_tau
from entropic_bound.core.io import atomic_path

#: image types `entropic-bound predict --plot` writes (matplotlib's Agg formats)
SPECTRUM_SUFFIXES = ("eps", "jpeg", "jpg", "pdf", "png", "ps", "svg", "svgz", "tif", "tiff", "webp")


def save_spectrum_plot(path, preds: dict, rec: dict) -> None:
    """Normalised spectra of every predictor that ran (the trusted one bold, the cut marked) and
    the trusted one's cumulative energy, written atomically to ``path`` (its suffix: the type).

    ``preds``, ``rec``: the "predictors" and "recommendation" of a predict report."""
    fmt = Path(path).suffix.lower().lstrip(".")
    if fmt not in SPECTRUM_SUFFIXES:
        raise ValueError(f"unknown image type {fmt or '(none)'!r}")
    from matplotlib.figure import Figure  # the [plot] extra; predict checks for it first

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
