"""What registration v4's selectors share (docs/method.md §5d): :class:`Selected`, the per-unit
outcomes a primitive decides, and the helpers that name an absent table and map the run's
registered tasks. A registered unit without a row is NaN (unknown), never dropped."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from entropic_bound.claims import theory_v3
from entropic_bound.claims.verdict import Check


@dataclass
class Selected:
    """Per-unit outcomes (``outcome``: True/False/NaN indexed by unit) or per-estimator scores
    (``scores``), with the words that describe them and, for a rate, the number of independent
    units behind them."""

    what: str
    outcome: pd.Series | None = None
    unit: str = "tasks"
    independent: int | None = None
    scores: dict = field(default_factory=dict)
    n: int = 0
    note: str = ""
    power: tuple[bool, str] | None = None


def _needs(tables: Mapping, *names: str) -> Check | None:
    """Missing input when a table the line reads is absent or has no rows (named by file)."""
    from entropic_bound.claims.verdict import TABLE_FILES

    absent = [TABLE_FILES[t] for t in names if tables.get(t) is None]
    empty = [TABLE_FILES[t] for t in names if tables.get(t) is not None and not len(tables[t])]
    parts = (["absent: " + ", ".join(absent)] if absent else []) + (
        ["empty (0 rows): " + ", ".join(empty)] if empty else []
    )
    return Check(None, "; ".join(parts)) if parts else None


def _tasks(run: dict | None, rungs) -> pd.DataFrame:
    return theory_v3.registered_tasks(run, rungs)


def _by_task(tasks: pd.DataFrame, values: pd.Series) -> pd.Series:
    out = pd.Series(tasks["task_id"].map(values).to_numpy(), index=tasks["task_id"].to_numpy())
    return out.astype("object").where(out.notna(), np.nan)


def _bool(cond, unknown) -> pd.Series:
    c = pd.Series(cond).reset_index(drop=True)
    u = pd.Series(unknown).reset_index(drop=True).astype(bool)
    return pd.Series(np.where(u, np.nan, c.astype(bool)), dtype="object")
