"""The claims C1-C9, in order, and how a run's verdicts are computed from its cached tables.

Each claim is one module (c1.py … c9.py: its statement, its test in words, its checks); this
list is the only place their order is set. Thresholds come from config/claims.yaml; see
docs/method.md §5 for each test.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from entropic_bound.claims import c1, c2, c3, c4, c5, c6, c7, c8, c9
from entropic_bound.claims.verdict import COLUMNS, TABLE_FILES, Claim
from entropic_bound.core.io import read_table

#: claim id -> :class:`Claim`, in the paper's order
CLAIMS: dict[str, Claim] = {m.CLAIM.cid: m.CLAIM for m in (c1, c2, c3, c4, c5, c6, c7, c8, c9)}
#: the abstract's sentence each claim tests
STATEMENTS = {cid: c.statement for cid, c in CLAIMS.items()}
#: the tables each claim reads; an absent one makes the verdict "missing input"
NEEDS = {cid: c.needs for cid, c in CLAIMS.items()}


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
