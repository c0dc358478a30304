"""Where the shipped reference lives: ``benchmarks/reference/`` of the clone this package runs
from. A wheel does not carry it (it is the repository's, beside the tolerances it is measured
with): installed, ``entropic-bound verify`` needs ``--reference`` and ``--tolerances``, and
says so in one line (:func:`shipped_reference`)."""

from __future__ import annotations

from pathlib import Path

from entropic_bound.verify.tolerance import VerifyInputError

#: the clone's root, when the package runs from ``<clone>/src/entropic_bound``
CLONE = Path(__file__).resolve().parents[3]
REFERENCE_ROOT = CLONE / "benchmarks" / "reference"


def default_reference(name: str = "paper") -> tuple[Path, Path]:
    """(reference folder, tolerance file) of the named reference in this clone."""
    return REFERENCE_ROOT / name, REFERENCE_ROOT / "tolerances.yaml"


def shipped_reference(name: str = "paper") -> tuple[Path, Path]:
    """:func:`default_reference` when this package runs from a clone; else a VerifyInputError
    (the command's one line, exit 2) that says where the reference is and what to pass."""
    folder, tolerances = default_reference(name)
    if folder.is_dir() and tolerances.is_file():
        return folder, tolerances
    raise VerifyInputError(
        "no shipped reference: it is part of the entropic-bound repository, not of the "
        f"installed package ({CLONE}); clone the repository and pass --reference "
        f"<clone>/benchmarks/reference/{name} --tolerances "
        "<clone>/benchmarks/reference/tolerances.yaml"
    )
