"""Drawing and writing figures F1–F7 and X1 (docs/method.md §6); PNG and PDF, readable in print.

Each figure's module (figures/spec.py names it) has ``draw(tables, claims)``, which returns a
matplotlib ``Figure``; :func:`save_figure` writes it atomically with the run's provenance in
the file metadata. No pyplot: figures are plain ``Figure`` objects, so no GUI backend and no
global state is involved.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from entropic_bound.core.io import atomic_path
from entropic_bound.figures.spec import FIGURES

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


def make_figure(fig_id: str, tables: dict[str, pd.DataFrame], claims: dict) -> Figure:
    """Draw figure ``fig_id`` from its tables (keys: the stems of :data:`FIGURES`) and the
    claim settings (estimator, ε, C2/C5/C7 thresholds) of config/claims.yaml."""
    if fig_id not in FIGURES:
        raise ValueError(f"unknown figure {fig_id!r}; choose one of {', '.join(FIGURES)}")
    module = importlib.import_module(f"entropic_bound.figures.{FIGURES[fig_id].module}")
    return module.draw(tables, claims)
