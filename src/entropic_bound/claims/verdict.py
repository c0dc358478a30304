"""What a verdict is: its words, the tables claims read, :class:`Check` (one conjunct of a
claim) and :class:`Claim` (a claim's statement, the tables it needs, its test in words and its
checks), and how a number is written in a verdict.

A claim is a conjunction of checks; its verdict is ``not reproduced`` when any check that
could be evaluated fails, ``missing input`` when a table it needs is absent or empty, its checks
raise, or a check has no data at all or is decided only by unknown cells (:func:`bound`), and no
other check failed, ``reproduced`` otherwise. The ordered list of claims is
:mod:`entropic_bound.claims.registry`'s; each claim is its own module (c1.py … c9.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

REPRODUCED, NOT_REPRODUCED, MISSING = "reproduced", "not reproduced", "missing input"
#: registration v2's further verdicts: a rate over fewer than its minimum of cases (or a trend
#: over too few rungs) decides nothing; a parametric estimator that cannot be exact on the grid's
#: true spectra is not used (docs/method.md §5b)
INSUFFICIENT, ILL_POSED = "insufficient data", "ill-posed on this grid"
#: the registrations computed in every run (none ever edited; docs/method.md §5, §5b, §5c)
REGISTRATIONS = ("v1", "v2", "v3", "v4")
#: claims.csv: one row per registration × claim; the headline is the claim's own number
#: (quantity, value, the threshold it is held to, and its denominator)
COLUMNS = [
    "registration",
    "claim",
    "statement",
    "measured",
    "threshold",
    "verdict",
    "headline",
    "headline_value",
    "headline_sense",
    "headline_threshold",
    "headline_n",
]

#: the file of each table under results/<run_name>/tables/
TABLE_FILES = {
    "data_only_predictions": "data_only_predictions.csv",
    "frontier": "frontier.csv",
    "train_metrics": "train_metrics.parquet",
    "train_dynamics": "train_dynamics.parquet",
    "bounds": "bounds.csv",
    "X1_boundaries": "X1_boundaries.csv",
    "X1_teachers": "X1_teachers.csv",
    "C8_distortion": "C8_distortion.parquet",
}


@dataclass
class Check:
    """One conjunct of a claim: passed is True, False, or None (no data to decide); ``status``
    says why a None is not plain missing input (INSUFFICIENT or ILL_POSED); ``headline`` is
    (quantity, value, sense, threshold, denominator) when this check carries the claim's number
    (sense ">=" or "<=": how the value is held to the threshold). Registration v3 names each
    check (``name``: its row in the controls table) and marks a ``validation`` (a property the
    mathematics guarantees: reported, never counted toward the verdict; docs/method.md §5c)."""

    passed: bool | None
    measured: str
    status: str | None = None
    headline: tuple | None = None
    name: str | None = None
    validation: bool = False
    #: registration v4: the sub-claim's role (counted, validation, beyond; docs/method.md §5d)
    role: str | None = None


@dataclass(frozen=True)
class Claim:
    """A registered claim: the tables it reads, its test in words, and its checks.

    Calling it with ``(tables, claims)`` returns the verdict row; an absent table gives
    ``missing input`` before any check runs (the guard every claim shares).
    """

    cid: str
    statement: str  # the abstract's sentence it tests
    needs: tuple[str, ...]
    threshold: Callable[[dict], str]
    checks: Callable[..., list[Check]]
    registration: str = "v1"

    def __call__(self, tables: Mapping, claims: dict, run: dict | None = None) -> dict:
        """The verdict row. v1 reads the top level of config/claims.yaml; v2 and v3 their
        section and the run's config ``run`` (the grid its estimators must be exact on, the
        tasks it registers)."""
        return _row(self, self.evaluate(tables, claims, run), self.threshold(self.settings(claims)))

    def reads(self, claims: dict) -> tuple[str, ...]:
        """The tables this claim reads (its ``needs``; a registration of data says per line)."""
        return self.needs

    def settings(self, claims: dict) -> dict:
        """This registration's thresholds: v1 the top level of config/claims.yaml, v2 and v3
        their sections."""
        return claims if self.registration == "v1" else claims[self.registration]

    def evaluate(self, tables: Mapping, claims: dict, run: dict | None = None) -> list[Check]:
        """The claim's checks (an absent or empty table: one check saying so, missing input).
        In every registration an error inside the claim's checks is that claim's missing input,
        with the reason, never the loss of the other claims: a table of the wrong shape, a NaN
        an estimator refuses, a column a join needs (docs/method.md §5c, "Faults, in every
        registration")."""
        settings = self.settings(claims)
        unread = _unread(tables, self.needs)
        if unread:
            return [Check(None, unread)]
        try:
            if self.registration == "v1":
                return self.checks(tables, settings)
            return self.checks(tables, settings, run)
        except Exception as exc:  # noqa: BLE001  any fault in the data is this claim's alone
            return [Check(None, fault_reason(exc, self.needs))]


def _unread(tables: Mapping, needs: tuple[str, ...]) -> str:
    """Why the claim cannot read its tables ('' when it can): absent files, and tables with no
    rows (a table of 0 rows holds no evidence either way, so it reads as absent)."""
    absent = [TABLE_FILES[t] for t in needs if tables.get(t) is None]
    empty = [TABLE_FILES[t] for t in needs if tables.get(t) is not None and len(tables[t]) == 0]
    parts = (["absent: " + ", ".join(absent)] if absent else []) + (
        ["empty (0 rows): " + ", ".join(empty)] if empty else []
    )
    return "; ".join(parts)


def fault_reason(exc: BaseException, needs: tuple[str, ...]) -> str:
    """One line: the tables the claim read and the error it raised on them."""
    message = " ".join(str(exc).split())
    if len(message) > 200:
        message = message[:200] + " …"
    files = ", ".join(TABLE_FILES[t] for t in needs)
    return f"missing input: {type(exc).__name__} reading {files}: {message}"


def claim(
    cid: str,
    statement: str,
    needs: tuple[str, ...],
    threshold: Callable[[dict], str],
    registration: str = "v1",
):
    """Decorate ``fn(tables, claims) -> list[Check]`` (v2, v3: ``fn(tables, section, run)``)
    into the :class:`Claim` ``cid`` of ``registration``."""

    def make(fn: Callable[..., list[Check]]) -> Claim:
        return Claim(cid, statement, tuple(needs), threshold, fn, registration)

    return make


def bound(passes: Callable[[bool], bool]) -> bool | None:
    """The bounding rule of a check with unknown cells (a NaN, a row that is not there).

    ``passes(favourable)`` decides the check with every unknown cell counted for the claim
    (True) or against it (False). Passing even against it is passed, failing even for it is
    failed: no value the unknown cells could take changes that. Otherwise the unknown cells
    alone decide, and None says so (missing input): a missing input is never a failure, and a
    NaN never counts for the claim (docs/method.md §5c, "Faults, in every registration")."""
    if passes(False):
        return True
    if not passes(True):
        return False
    return None


def bounded(outcome: pd.Series, passes: Callable[[pd.Series], bool], good: bool = True):
    """:func:`bound` over per-cell outcomes (True, False, NaN or None for unknown):
    ``passes`` decides a filled boolean Series; ``good`` is the value of a cell that speaks
    for the claim (False for an "at most" rate, where a hit speaks against it)."""
    known = pd.Series(outcome, dtype="object").astype("boolean")
    return bound(lambda fav: bool(passes(known.fillna(good if fav else not good).astype(bool))))


def unknown_cells(outcome: pd.Series, what: str = "cells") -> str:
    """'; k unknown <what> (no row or NaN): a, b, c, d …' naming the first few ('' for none)."""
    known = pd.Series(outcome, dtype="object").astype("boolean")
    names = [str(x) for x in outcome.index[known.isna().to_numpy()]]
    return unknown_note(names, what)


def unknown_note(names: list[str], what: str = "cells") -> str:
    if not names:
        return ""
    more = " …" if len(names) > 4 else ""
    return f"; {len(names)} unknown {what} (no row or NaN): {', '.join(names[:4])}{more}"


def undecided_note(passed: bool | None) -> str:
    return "; undecided: the unknown cells alone decide (missing input)" if passed is None else ""


def fmt(x: float) -> str:
    """A number for a human: 3 significant digits, NaN as 'n/a'."""
    return "n/a" if x is None or not np.isfinite(x) else f"{x:.3g}"


def rate(summary: dict) -> str:
    if summary["n"] == 0:
        return "no cases"
    return (
        f"exact {summary['exact']}/{summary['n']} = {summary['exact_rate']:.2f}; "
        f"mean |err| {fmt(summary['mean_abs_error'])}"
    )


def verdict_of(checks: list[Check]) -> str:
    """Any failed check: not reproduced; else an ill-posed one, else one with too few cases,
    else one without data (in that order); else reproduced. Validations do not count."""
    counted = [c for c in checks if not c.validation]
    if checks and not counted:  # only validations: nothing decides
        return MISSING
    checks = counted
    if any(c.passed is False for c in checks):
        return NOT_REPRODUCED
    undecided = [c for c in checks if c.passed is None]
    for status in (ILL_POSED, INSUFFICIENT):
        if any(c.status == status for c in undecided):
            return status
    return MISSING if undecided else REPRODUCED


def _text(check: Check) -> str:
    return f"[validation] {check.measured}" if check.validation else check.measured


def _row(claim: Claim, checks: list[Check], threshold: str) -> dict:
    counted = [c for c in checks if not c.validation]
    heads = [c.headline for c in counted if c.headline is not None]
    # the claim's number: its first failing check's, else its first check's that has one
    failing = [c.headline for c in counted if c.headline is not None and c.passed is False]
    head = (failing or heads or [(None, np.nan, None, np.nan, np.nan)])[0]
    return {
        "registration": claim.registration,
        "claim": claim.cid,
        "statement": claim.statement,
        "measured": "; ".join(_text(c) for c in checks),
        "threshold": threshold,
        "verdict": verdict_of(checks),
        "headline": head[0],
        "headline_value": head[1],
        "headline_sense": head[2],
        "headline_threshold": head[3],
        "headline_n": head[4],
    }


def absent_rungs(present, wanted) -> str:
    gone = [r for r in wanted if r not in set(present)]
    return f" (absent: {', '.join(gone)})" if gone else ""


def nan_note(values: pd.Series, what: str) -> str:
    """'; k NaN <what>' when some tested values are NaN (they count as failures)."""
    k = int(values.isna().sum())
    return f"; {k} NaN {what} (counted as failures)" if k else ""
