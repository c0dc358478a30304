"""Where the shipped reference lives: ``benchmarks/reference/`` of the clone this package runs
from (an installed wheel does not carry it: pass ``--reference`` and ``--tolerances`` then)."""

from __future__ import annotations

from pathlib import Path

#: the clone's root, when the package runs from ``<clone>/src/entropic_bound``
CLONE = Path(__file__).resolve().parents[3]
REFERENCE_ROOT = CLONE / "benchmarks" / "reference"


def default_reference(name: str = "paper") -> tuple[Path, Path]:
    """(reference folder, tolerance file) of the named reference in this clone."""
    return REFERENCE_ROOT / name, REFERENCE_ROOT / "tolerances.yaml"
