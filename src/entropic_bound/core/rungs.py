"""Names and constants of the ladder rungs (docs/method.md §1). Torch-free, so that analysis and
plotting jobs do not pay for a torch import."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

#: rungs with an n×n kernel that does not look at the input
STATIC_RUNGS = ("L0", "L1")
#: rungs whose operator is a row-softmax (log-inversion applies to them)
SOFTMAX_CLASSES = ("L1", "L2", "Lam", "L4")

#: rungs whose mixing ignores the input (M = act(bias)): the population objective of the
#: best-known bounds is exact there (bounds/population.py)
POPULATION_CLASSES = ("L0", "L1", "L2")

_LAM = re.compile(r"^Lam(\d+(?:\.\d+)?)$")


#: decimals an Lλ rung name may carry (a λ that needs more is refused by the config check)
LAM_DIGITS = 12


def rung_name(cls: str, lam: float | None = None) -> str:
    """Table name of a rung: ``L0`` … ``L4`` or ``Lam0.50`` for the interpolation rungs.

    λ is written with two decimals, or with as many more as it takes to read the same float
    back (``Lam0.501``, ``Lam0.004``): tasks take their λ from the name (:func:`parse_rung`),
    so two λ must never share a name, and no λ may round to another (0.004 to λ = 0)."""
    if cls != "Lam":
        return cls
    lam = float(lam)
    for digits in range(2, LAM_DIGITS + 1):
        text = f"{lam:.{digits}f}"
        if float(text) == lam:
            return f"Lam{text}"
    raise ValueError(f"λ = {lam!r} needs more than {LAM_DIGITS} decimals; round it")


def parse_rung(rung: str) -> tuple[str, float | None]:
    """``"Lam0.50" -> ("Lam", 0.5)``, ``"L3" -> ("L3", None)``."""
    m = _LAM.match(rung)
    if m:
        return "Lam", float(m.group(1))
    if rung in ("L0", "L1", "L2", "L3", "L4"):
        return rung, None
    raise ValueError(f"unknown rung {rung!r}; use L0..L4 or Lam<lambda> such as Lam0.50")


def ladder_lambda(rung: str) -> float | None:
    """Position of a query-key rung on the interpolation ladder (L2 = 0, L4 = 1)."""
    cls, lam = parse_rung(rung)
    return {"L2": 0.0, "L4": 1.0, "Lam": lam}.get(cls)


def has_population(rung: str) -> bool:
    """Whether a rung's mixing ignores the input (its population objective is exact)."""
    return parse_rung(rung)[0] in POPULATION_CLASSES


def is_softmax(rung: str) -> bool:
    return parse_rung(rung)[0] in SOFTMAX_CLASSES


def kernel_dim(rung: str, n: int, d: int) -> int:
    return n if parse_rung(rung)[0] in STATIC_RUNGS else d


def kernel_norm(rung: str, n: int, d: int, gain: float) -> float:
    """Frobenius norm that gives every class an output variance ≈ gain²."""
    cls, _ = parse_rung(rung)
    if cls == "L0":
        return gain * math.sqrt(n)
    if cls == "L1":
        return gain * n
    return gain * math.sqrt(d)


def rung_sort_key(rung: str) -> tuple:
    """Ladder order L0 → L1 → L2 → Lλ (by λ) → L4, then L3 (linear attention, off the ladder)."""
    cls, lam = parse_rung(rung)
    order = {"L0": 0, "L1": 1, "L2": 2, "Lam": 3, "L4": 4, "L3": 5}[cls]
    return (order, lam or 0.0)


def sort_rungs(rungs: Iterable[str]) -> list[str]:
    return sorted(set(rungs), key=rung_sort_key)


def mixing_kind(rung: str) -> str:
    """``linear`` for the linear-mixing rungs (L0, L3), ``softmax`` otherwise."""
    return "linear" if parse_rung(rung)[0] in ("L0", "L3") else "softmax"
