"""The per-column tolerances of ``entropic-bound verify``: what "agrees" means, table by table.

A tolerance file (``benchmarks/reference/tolerances.yaml``) reads::

    safety_factor: 10        # measured deviation × this = the tolerance (documentation only)
    float_default: {rtol: 1.0e-6, atol: 0.0}
    tables:
      frontier.csv:
        r_hat: {rtol: 2.0e-5, atol: 1.0e-9}
        n: exact

A run's value ``v`` agrees with the reference value ``r`` when ``|v - r| <= atol + rtol·|r|``
(NaN agrees only with NaN, an infinity only with itself). ``exact`` asks for equality.

A column's rule is its own entry, else the first entry (in the file's order) whose name is a
shell-style pattern that matches it (``R_*: {rtol: ...}`` covers every ``R_`` column a table
gains later). A column with no rule is compared exactly when its reference values are integers,
booleans or text, at ``float_default`` when they are floats, and is reported as having no rule
(verify's notes), never silently passed. How the numbers were measured: docs/reproducibility.md
("Checking a run on another CPU").
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path

EXACT_WORD = "exact"
#: a column name holding one of these is a pattern (fnmatch: ``*``, ``?``, ``[...]``)
PATTERN_CHARS = "*?["


def is_pattern(name: str) -> bool:
    """Whether a tolerance file's column entry is a pattern rather than one column's name (or
    one column's rows of one predictor, ``r_hat[predictor=P_attn]``)."""
    return not is_qualified(name) and any(c in name for c in PATTERN_CHARS)


def is_qualified(name: str) -> bool:
    """``column[predictor=<value>]``: the rule of the column's rows with that predictor."""
    return name.endswith("]") and "[" in name and "=" in name.split("[", 1)[1]


class VerifyInputError(ValueError):
    """A problem with verify's inputs (exit 2), not a disagreement (exit 1)."""


@dataclass(frozen=True)
class Tolerance:
    """``|v - r| <= atol + rtol·|r|``; ``exact`` asks for equality (NaN equal to NaN)."""

    rtol: float = 0.0
    atol: float = 0.0
    exact: bool = False

    def describe(self) -> str:
        return EXACT_WORD if self.exact else f"rtol {self.rtol:.1e}, atol {self.atol:.1e}"


EXACT = Tolerance(exact=True)


@dataclass(frozen=True)
class Tolerances:
    """The whole file: a tolerance per (table, column), and the float default."""

    float_default: Tolerance
    tables: dict[str, dict[str, Tolerance]]
    safety_factor: float | None = None
    #: decisions made by a threshold: the cross-CPU spread of each deciding quantity
    #: (``spectra``: predictor -> spread of s/s_1; docs/reproducibility.md)
    decisions: dict = None  # type: ignore[assignment]
    #: the CPUs the tolerances were measured on (documentation only)
    measured_on: dict = None  # type: ignore[assignment]

    def spectral_spread(self, predictor: str) -> float | None:
        """The measured spread of ``predictor``'s normalised spectrum, None if unmeasured."""
        entry = (self.decisions or {}).get("spectra", {}).get(predictor)
        return None if entry is None else float(entry["spread"])

    def rule(self, table: str, column: str) -> Tolerance | None:
        """The file's rule for ``column`` of ``table``: its own entry, else the first pattern
        entry that matches it, else None (no rule)."""
        entries = self.tables.get(table, {})
        column = column.split("[", 1)[0] if column not in entries and "[" in column else column
        if column in entries:
            return entries[column]
        return next(
            (
                tol
                for name, tol in entries.items()
                if is_pattern(name) and fnmatchcase(column, name)
            ),
            None,
        )

    def column(self, table: str, column: str, is_float: bool) -> Tolerance:
        """The tolerance of ``column`` of ``table``: its rule, else exact for a non-float
        reference column, else ``float_default``."""
        listed = self.rule(table, column)
        if listed is not None:
            return listed
        return self.float_default if is_float else EXACT


def _tolerance(value, where: str) -> Tolerance:
    if value == EXACT_WORD:
        return EXACT
    if not isinstance(value, dict) or not value or set(value) - {"rtol", "atol"}:
        raise VerifyInputError(
            f"{where}: expected `exact` or a mapping of rtol/atol, got {value!r}; "
            "write e.g. {rtol: 1.0e-6, atol: 0.0}"
        )
    out = {}
    for key in ("rtol", "atol"):
        x = value.get(key, 0.0)
        if isinstance(x, bool) or not isinstance(x, int | float) or not math.isfinite(x) or x < 0:
            raise VerifyInputError(
                f"{where}.{key} is {x!r}; give a finite number >= 0 (e.g. 1.0e-6)"
            )
        out[key] = float(x)
    return Tolerance(**out)


def parse_tolerances(doc, source: str = "tolerance file") -> Tolerances:
    """:class:`Tolerances` from the parsed YAML ``doc``; VerifyInputError names what is wrong."""
    allowed = {"safety_factor", "float_default", "tables", "decisions", "measured_on"}
    if not isinstance(doc, dict) or set(doc) - allowed:
        raise VerifyInputError(
            f"{source}: expected the keys safety_factor, float_default, tables; "
            "see benchmarks/reference/tolerances.yaml"
        )
    tables = doc.get("tables") or {}
    if not isinstance(tables, dict):
        raise VerifyInputError(f"{source}: `tables` must map table names to columns")
    parsed: dict[str, dict[str, Tolerance]] = {}
    for table, columns in tables.items():
        if not isinstance(columns, dict):
            raise VerifyInputError(f"{source}: tables.{table} must map column names to tolerances")
        parsed[str(table)] = {
            str(c): _tolerance(v, f"{source}: tables.{table}.{c}") for c, v in columns.items()
        }
    default = _tolerance(doc.get("float_default", EXACT_WORD), f"{source}: float_default")
    factor = doc.get("safety_factor")
    decisions = doc.get("decisions") or {}
    for pred, entry in (
        (decisions.get("spectra") or {}).items() if isinstance(decisions, dict) else ()
    ):
        x = entry.get("spread") if isinstance(entry, dict) else None
        if isinstance(x, bool) or not isinstance(x, int | float) or not math.isfinite(x) or x < 0:
            raise VerifyInputError(
                f"{source}: decisions.spectra.{pred}.spread is {x!r}; give a number >= 0"
            )
    return Tolerances(
        default,
        parsed,
        None if factor is None else float(factor),
        decisions if isinstance(decisions, dict) else {},
        doc.get("measured_on") or {},
    )


def load_tolerances(path) -> Tolerances:
    """Read and check a tolerance file (strict YAML: no duplicate keys, no anchors)."""
    from entropic_bound.config.strict_yaml import StrictYAMLError, load_strict

    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = getattr(exc, "strerror", None) or exc
        raise VerifyInputError(
            f"tolerance file {path} cannot be read ({why}); pass --tolerances FILE"
        ) from None
    try:
        doc = load_strict(text)
    except StrictYAMLError as exc:
        todo = "" if "; " in str(exc) else "; fix the file (its format: verify/tolerance.py)"
        raise VerifyInputError(f"tolerance file {path}: {exc}{todo}") from None
    return parse_tolerances(doc, f"tolerances {path}")
