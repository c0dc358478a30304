"""Claims C1–C9 as code (SCIENCE.md §5): each a function from cached tables to one verdict row.

A claim function takes ``tables`` (file stem -> DataFrame, or None when the file is absent) and
the thresholds of ``config/claims.yaml``, and returns a dict with the columns of
``claims.csv``: claim, statement, measured, threshold, verdict. A claim is a conjunction of
checks; its verdict is

* ``not reproduced`` when any check that could be evaluated fails,
* ``missing input`` when a table it needs is absent, or a check has no data at all (a rung or
  grid cell the config did not produce) and no other check failed,
* ``reproduced`` otherwise.

Thresholds are never set here: every number and list a verdict depends on (thresholds, rungs,
competing estimators, tolerances) comes from ``claims`` (config/claims.yaml). A NaN in a
tested quantity fails its check; a task or rung the inputs should hold but do not is noted
and makes its check ``missing input``, never a pass. Each claim is registered by
:func:`claim`, which also applies the shared absent-table guard.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from .claims_attention import claim_c6, claim_c7, claim_c8, claim_c9
from .claims_base import (
    CLAIMS,
    COLUMNS,
    MISSING,
    NOT_REPRODUCED,
    REPRODUCED,
    STATEMENTS,
    TABLE_FILES,
    Check,
    Claim,
    claim,
)
from .claims_report import claims_markdown, claims_text
from .claims_static import claim_c1, claim_c2, claim_c3, claim_c4, claim_c5
from .io import read_table

#: the public names, including those re-exported from the modules the claims moved to
__all__ = [
    "CLAIMS",
    "COLUMNS",
    "MISSING",
    "NEEDS",
    "NOT_REPRODUCED",
    "REPRODUCED",
    "STATEMENTS",
    "TABLE_FILES",
    "Check",
    "Claim",
    "claim",
    "claim_c1",
    "claim_c2",
    "claim_c3",
    "claim_c4",
    "claim_c5",
    "claim_c6",
    "claim_c7",
    "claim_c8",
    "claim_c9",
    "claims_markdown",
    "claims_text",
    "evaluate_claims",
    "load_tables",
]

#: the tables each claim reads; an absent one makes the verdict "missing input"
NEEDS = {cid: c.needs for cid, c in CLAIMS.items()}


# ---------------------------------------------------------------- all claims, files


def load_tables(tables_dir, names=tuple(TABLE_FILES)) -> dict[str, pd.DataFrame | None]:
    """Read the cached tables under ``tables_dir``; an absent file maps to None."""
    out = {}
    for name in names:
        path = Path(tables_dir) / TABLE_FILES[name]
        out[name] = read_table(path) if path.exists() else None
    return out


def evaluate_claims(tables: Mapping, claims: dict) -> pd.DataFrame:
    """T1: one row per claim, in order C1..C9 (columns claim, statement, measured, threshold,
    verdict). Everything a verdict depends on comes from ``claims`` (config/claims.yaml)."""
    return pd.DataFrame([c(tables, claims) for c in CLAIMS.values()], columns=COLUMNS)
