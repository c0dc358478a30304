"""Compare a run's tables with a shipped reference, column by column, within tolerances.

The reference is a folder of gzip-compressed copies of a run's tables (``<table>.csv.gz``,
written by ``benchmarks/make_reference.py``); the run is ``<results dir>/tables/``. Only the
tables the reference holds are compared; a table of the run that the reference lacks is
reported as "not in reference" (no failure), and so is a column of the run that the reference
lacks. Rows are compared in order (the pipeline writes them in a fixed order): a run whose
rows are reordered disagrees in its exact (key) columns.

The deviation of a value is reported as a share of what its tolerance allows (``ratio``, see
:mod:`.tolerance`): a table agrees when every ratio is at most 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from entropic_bound.verify.tolerance import Tolerance, Tolerances, VerifyInputError

REFERENCE_SUFFIX = ".csv.gz"
RUN_SUFFIXES = (".csv", ".parquet")
OK, OUT, MISSING, NOT_IN_REFERENCE = "ok", "OUT OF TOLERANCE", "MISSING", "not in reference"


@dataclass
class Worst:
    """The value of a table furthest from its reference, as a share of its tolerance."""

    column: str
    row: int
    ratio: float  # |v - r| / (atol + rtol·|r|); inf for an exact mismatch
    abs_dev: float  # |v - r| (nan for text)
    rel_dev: float  # |v - r| / |r| (inf where r = 0 and v != 0; nan for text)
    tolerance: Tolerance
    reference: str = ""  # the two values, as text
    value: str = ""


@dataclass
class TableResult:
    name: str
    status: str  # OK | OUT | MISSING | NOT_IN_REFERENCE
    rows: int = 0
    worst: Worst | None = None
    problems: list[str] = field(default_factory=list)  # why it is OUT, one phrase each
    notes: list[str] = field(default_factory=list)  # what was not compared, or had no rule
    unruled: list[str] = field(default_factory=list)  # reference columns without a rule
    #: flips accepted as decisions within rounding: one line each (row, column, margins)
    within_rounding: list[str] = field(default_factory=list)


def read_table_file(path: Path) -> pd.DataFrame:
    """A table (.csv, .csv.gz or .parquet); a file that cannot be parsed is a VerifyInputError."""
    try:
        if path.name.endswith(".parquet"):
            return pd.read_parquet(path)
        return pd.read_csv(path)
    except FileNotFoundError:
        raise VerifyInputError(f"{path} does not exist; check the path") from None
    except (
        pd.errors.ParserError,
        pd.errors.EmptyDataError,
        UnicodeDecodeError,
        OSError,
        EOFError,
        ValueError,
    ) as exc:
        why = " ".join(str(exc).split())[:200]
        raise VerifyInputError(
            f"{path} is not a readable table ({why}); regenerate it or remove it"
        ) from None


def reference_tables(folder: Path) -> dict[str, Path]:
    """Table name (``frontier.csv``) → its compressed copy in the reference folder."""
    if not folder.is_dir():
        raise VerifyInputError(
            f"reference folder {folder} does not exist; pass --reference or run "
            "benchmarks/make_reference.py"
        )
    found = {
        p.name[: -len(".gz")]: p
        for p in sorted(folder.iterdir())
        if p.name.endswith(REFERENCE_SUFFIX)
    }
    if not found:
        raise VerifyInputError(f"reference folder {folder} holds no *{REFERENCE_SUFFIX} table")
    return found


def _tables_in(folder: Path) -> dict[str, Path]:
    """Tables directly in ``folder``: CSV or parquet, or a recorded run's ``.csv.gz`` (named
    without ``.gz``)."""
    found = {
        p.name: p for p in sorted(folder.iterdir()) if p.is_file() and p.suffix in RUN_SUFFIXES
    }
    for p in sorted(folder.glob(f"*{REFERENCE_SUFFIX}")):
        found.setdefault(p.name[: -len(".gz")], p)
    return found


def run_tables(run_dir: Path) -> dict[str, Path]:
    """Table name → file, for every CSV or parquet table directly under ``run_dir/tables``, or
    directly under ``run_dir`` when it is that tables folder itself (``results/paper/tables``)."""
    if not run_dir.is_dir():
        raise VerifyInputError(
            f"results folder {run_dir} does not exist; give a run's folder, e.g. results/paper"
        )
    tdir = run_dir / "tables"
    if tdir.is_dir():
        return _tables_in(tdir)
    found = _tables_in(run_dir)
    if found:  # the tables folder itself was given
        return found
    raise VerifyInputError(
        f"{run_dir} has no tables/ folder and holds no table; give a finished run's folder "
        "(e.g. results/paper), or finish the run first (`make reproduce`)"
    )


def _no_rule_note(name: str, ref: pd.DataFrame, unruled: list[str], tols: Tolerances) -> str:
    """The note that lists a table's reference columns without a rule, and how each was
    compared instead."""
    how = ", ".join(f"{c} ({tols.column(name, c, _is_float(ref[c])).describe()})" for c in unruled)
    return f"no tolerance rule for {how}: give each a rule in the tolerance file"


def _is_float(col: pd.Series) -> bool:
    return pd.api.types.is_float_dtype(col.dtype)


def exact_mismatches(ref: pd.Series, run: pd.Series) -> np.ndarray:
    """Rows where the values differ (NaN equals NaN; 3 equals 3.0)."""
    a, b = ref.to_numpy(dtype=object), run.to_numpy(dtype=object)
    same = np.array([x == y or (pd.isna(x) and pd.isna(y)) for x, y in zip(a, b)], dtype=bool)
    return ~same


def float_ratios(ref: np.ndarray, run: np.ndarray, tol: Tolerance) -> np.ndarray:
    """|v - r| / (atol + rtol·|r|) per row: 0 where equal (NaN = NaN, inf = inf), inf where
    beyond any tolerance (NaN against a number, a difference where nothing is allowed)."""
    ref, run = ref.astype(float), run.astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        dev = np.abs(run - ref)
        allowed = tol.atol + tol.rtol * np.abs(ref)
        ratio = np.where(dev == 0, 0.0, dev / allowed)
    same = (ref == run) | (np.isnan(ref) & np.isnan(run))
    ratio = np.where(same, 0.0, ratio)
    return np.where(np.isnan(ratio), np.inf, ratio)


#: a column's rule may depend on the row's value of this column (``r_hat[predictor=P_attn]``):
#: a float32 path and a float64 path in one column get their own tolerances
QUALIFIER = "predictor"


def qualified_tolerances(
    table: str, col: str, ref: pd.DataFrame, tols: Tolerances
) -> list[tuple[np.ndarray, Tolerance]]:
    """(rows, tolerance) of ``col``: one group per ``predictor`` where the file names
    ``col[predictor=<p>]``, the rest under the column's own rule."""
    base = tols.column(table, col, _is_float(ref[col]))
    if QUALIFIER not in ref.columns:
        return [(np.ones(len(ref), dtype=bool), base)]
    groups, rest = [], np.ones(len(ref), dtype=bool)
    entries = tols.tables.get(table, {})
    for value in ref[QUALIFIER].dropna().unique():
        key = f"{col}[{QUALIFIER}={value}]"
        if key in entries:
            rows = (ref[QUALIFIER] == value).to_numpy()
            groups.append((rows, entries[key]))
            rest &= ~rows
    return [*groups, (rest, base)]


def column_ratios(name: str, ref: pd.Series, run: pd.Series, tol: Tolerance) -> np.ndarray:
    numeric = pd.api.types.is_numeric_dtype(ref.dtype) and pd.api.types.is_numeric_dtype(run.dtype)
    if tol.exact or not numeric:
        return np.where(exact_mismatches(ref, run), np.inf, 0.0)
    return float_ratios(ref.to_numpy(), run.to_numpy(), tol)


def _column_worst(
    name: str, ref: pd.Series, run: pd.Series, tol: Tolerance, ratio: np.ndarray | None = None
) -> Worst:
    numeric = pd.api.types.is_numeric_dtype(ref.dtype) and pd.api.types.is_numeric_dtype(run.dtype)
    if ratio is None:
        ratio = column_ratios(name, ref, run, tol)
    row = int(np.argmax(ratio)) if len(ratio) else 0
    abs_dev = rel_dev = math.nan
    if numeric and len(ratio):
        r, v = float(ref.iloc[row]), float(run.iloc[row])
        if not (math.isnan(r) or math.isnan(v)):
            abs_dev = abs(v - r)
            rel_dev = abs_dev / abs(r) if r else (0.0 if v == r else math.inf)
    if not len(ratio):
        return Worst(name, 0, 0.0, abs_dev, rel_dev, tol)
    return Worst(
        name, row, float(ratio[row]), abs_dev, rel_dev, tol, str(ref.iloc[row]), str(run.iloc[row])
    )


def compare_frames(
    name: str, ref: pd.DataFrame, run: pd.DataFrame, tols: Tolerances, decisions=None
) -> TableResult:
    """One table: its shape, its columns, then every column within its tolerance."""
    res = TableResult(name, OK, rows=len(ref))
    missing = [c for c in ref.columns if c not in run.columns]
    extra = [c for c in run.columns if c not in ref.columns]
    if missing:
        res.problems.append(f"columns missing from the run: {', '.join(missing)}")
    if extra:
        res.notes.append(f"columns not in reference: {', '.join(extra)}")
    if len(run) != len(ref):
        res.problems.append(f"{len(run)} rows, the reference has {len(ref)}")
    res.unruled = [c for c in ref.columns if tols.rule(name, c) is None]
    if res.unruled:
        res.notes.append(_no_rule_note(name, ref, res.unruled, tols))
    if not res.problems:
        for col in ref.columns:
            ratio = np.zeros(len(ref))
            tol_of_row: list[Tolerance] = [tols.column(name, col, _is_float(ref[col]))] * len(ref)
            for rows, tol in qualified_tolerances(name, col, ref, tols):
                ratio[rows] = column_ratios(col, ref[col][rows], run[col][rows], tol)
                for i in np.flatnonzero(rows):
                    tol_of_row[i] = tol
            if decisions is not None and np.any(ratio > 1):
                ratio = decisions.accept(name, col, ref, run, ratio, res)
            row = int(np.argmax(ratio)) if len(ratio) else 0
            tol = tol_of_row[row] if len(ratio) else tols.column(name, col, _is_float(ref[col]))
            w = _column_worst(col, ref[col], run[col], tol, ratio)
            if res.worst is None or w.ratio > res.worst.ratio:
                res.worst = w
        if res.worst is not None and res.worst.ratio > 1:
            w = res.worst
            res.problems.append(f"{w.column} row {w.row} beyond {w.tolerance.describe()}")
    res.status = OUT if res.problems else OK
    return res


def verify_run(run_dir, reference_dir, tolerances: Tolerances) -> list[TableResult]:
    """Every reference table against the run's table of the same name, then the run's tables
    the reference does not hold (``not in reference``). Inputs that cannot be read raise
    VerifyInputError; disagreements are results (status OUT or MISSING)."""
    from entropic_bound.verify.rules import Decisions

    ref_files = reference_tables(Path(reference_dir))
    run_files = run_tables(Path(run_dir))
    frames = {
        name: (read_table_file(p), read_table_file(run_files[name]))
        for name, p in ref_files.items()
        if name in run_files
    }
    decisions = Decisions(frames, tolerances, Path(run_dir), Path(reference_dir))
    results = []
    # decision tables first: the aggregates built from them are judged through their flips
    order = sorted(ref_files, key=lambda n: (n not in Decisions.SOURCES, n))
    for name in order:
        if name not in run_files:
            results.append(TableResult(name, MISSING, problems=["missing from the run"]))
            continue
        ref, run = frames[name]
        results.append(compare_frames(name, ref, run, tolerances, decisions))
    results.sort(key=lambda r: list(ref_files).index(r.name))
    results += [TableResult(n, NOT_IN_REFERENCE) for n in run_files if n not in ref_files]
    return results


def agrees(results: list[TableResult]) -> bool:
    return all(r.status in (OK, NOT_IN_REFERENCE) for r in results)
