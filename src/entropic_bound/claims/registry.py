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
from entropic_bound.claims.v4 import build_claims
from entropic_bound.claims.verdict import COLUMNS, TABLE_FILES, Claim
from entropic_bound.core.io import read_table

_MODULES = (c1, c2, c3, c4, c5, c6, c7, c8, c9)
#: claim id -> :class:`Claim` of registration v1, in the paper's order
CLAIMS: dict[str, Claim] = {m.CLAIM.cid: m.CLAIM for m in _MODULES}
#: claim id -> :class:`Claim` of registration v2 (docs/method.md §5b)
CLAIMS_V2: dict[str, Claim] = {m.CLAIM_V2.cid: m.CLAIM_V2 for m in _MODULES}
#: claim id -> :class:`Claim` of registration v3 (docs/method.md §5c)
CLAIMS_V3: dict[str, Claim] = {m.CLAIM_V3.cid: m.CLAIM_V3 for m in _MODULES}
#: claim id -> :class:`ClaimV4` of registration v4 (docs/method.md §5d), the current one: its
#: sub-claims are data (config/claims.yaml, v4.subclaims)
CLAIMS_V4 = build_claims({cid: c.statement for cid, c in CLAIMS.items()})
#: registration -> its claims
REGISTRY = {"v1": CLAIMS, "v2": CLAIMS_V2, "v3": CLAIMS_V3, "v4": CLAIMS_V4}
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


def evaluate_claims(tables: Mapping, claims: dict, run: dict | None = None) -> pd.DataFrame:
    """T1: one row per registration × claim, v1's C1..C9, then v2's, v3's and v4's (columns:
    COLUMNS; v4's sub-claims, one row each: :func:`entropic_bound.claims.v4.subclaim_table`).

    Everything a verdict depends on comes from ``claims`` (config/claims.yaml: v1 at its top
    level, v2 and v3 in their sections) and, for v2 and v3, the run's config ``run`` (the grid
    on which its estimators must be exact, the data budget, the tasks it registers); without
    ``run`` those checks say "missing input"."""
    rows = [c(tables, claims, run) for reg in REGISTRY.values() for c in reg.values()]
    return pd.DataFrame(rows, columns=COLUMNS)
