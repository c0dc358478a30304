"""What a verdict is: its words, the tables claims read, :class:`Check` (one conjunct of a
claim) and :class:`Claim` (a claim's statement, the tables it needs, its test in words and its
checks), and how a number is written in a verdict.

A claim is a conjunction of checks; its verdict is ``not reproduced`` when any check that
could be evaluated fails, ``missing input`` when a table it needs is absent or a check has no
data at all and no other check failed, ``reproduced`` otherwise. The ordered list of claims is
:mod:`entropic_bound.claims.registry`'s; each claim is its own module (c1.py … c9.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

REPRODUCED, NOT_REPRODUCED, MISSING = "reproduced", "not reproduced", "missing input"
COLUMNS = ["claim", "statement", "measured", "threshold", "verdict"]

#: the file of each table under results/<run_name>/tables/
TABLE_FILES = {
    "data_only_predictions": "data_only_predictions.csv",
    "frontier": "frontier.csv",
    "train_metrics": "train_metrics.parquet",
    "train_dynamics": "train_dynamics.parquet",
}


@dataclass
class Check:
    """One conjunct of a claim: passed is True, False, or None (no data to decide)."""

    passed: bool | None
    measured: str


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
    checks: Callable[[Mapping, dict], list[Check]]

    def __call__(self, tables: Mapping, claims: dict) -> dict:
        threshold = self.threshold(claims)
        absent = [t for t in self.needs if tables.get(t) is None]
        if absent:
            return {
                "claim": self.cid,
                "statement": self.statement,
                "measured": "absent: " + ", ".join(TABLE_FILES[t] for t in absent),
                "threshold": threshold,
                "verdict": MISSING,
            }
        return _row(self.cid, self.statement, self.checks(tables, claims), threshold)


def claim(cid: str, statement: str, needs: tuple[str, ...], threshold: Callable[[dict], str]):
    """Decorate ``fn(tables, claims) -> list[Check]`` into the :class:`Claim` ``cid``."""

    def make(fn: Callable[[Mapping, dict], list[Check]]) -> Claim:
        return Claim(cid, statement, tuple(needs), threshold, fn)

    return make


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


def _row(claim: str, statement: str, checks: list[Check], threshold: str) -> dict:
    if any(c.passed is False for c in checks):
        verdict = NOT_REPRODUCED
    elif any(c.passed is None for c in checks):
        verdict = MISSING
    else:
        verdict = REPRODUCED
    return {
        "claim": claim,
        "statement": statement,
        "measured": "; ".join(c.measured for c in checks),
        "threshold": threshold,
        "verdict": verdict,
    }


def absent_rungs(present, wanted) -> str:
    gone = [r for r in wanted if r not in set(present)]
    return f" (absent: {', '.join(gone)})" if gone else ""


def nan_note(values: pd.Series, what: str) -> str:
    """'; k NaN <what>' when some tested values are NaN (they count as failures)."""
    k = int(values.isna().sum())
    return f"; {k} NaN {what} (counted as failures)" if k else ""
