"""Measure how far runs on other code paths deviate from a reference run, column by column, and
write the tolerances of `entropic-bound verify` from the largest deviation seen.

    python benchmarks/measure_tolerances.py results/paper results/paper_avx2 results/paper_torch \
        results/paper_t2 [--safety 10] [--out benchmarks/reference/tolerances.yaml] \
        [--json benchmarks/results/tolerances_<date>.json]

For every CSV table of the reference run (the first argument) and every column:

* a non-float column (integers, booleans, text): ``exact``; a difference seen is reported;
* a float column: rows whose reference value is at least 1e-3 of the column's largest |value|
  are judged relatively, the rest absolutely (a risk of 1e-9 beside risks of 1 carries the
  absolute noise of its computation, not a relative one):
  ``rtol = safety × max |v - r| / |r|`` over the first rows, ``atol = safety × max |v - r|``
  over the others, with a floor of ``rtol = 4 float32 ulps`` (4.8e-7) where nothing deviated.

The tolerance file records each column's measured maxima in a comment, and `float_default`
(for a float column the file does not list) is the largest rtol and atol of any column. The
columns of a table that match one of its PATTERN_RULES are measured together and written as one
pattern entry (the largest deviation of any of them), so that a column the table gains later
(bounds.csv's R_* routes) gets that rule without an edit of the file (verify/tolerance.py).
"""

from __future__ import annotations

import argparse
import json
import sys
from fnmatch import fnmatchcase
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
#: values below this share of a column's largest |value| are compared absolutely
SMALL_SHARE = 1e-3
#: the rtol of a float column where no run deviated: 4 ulps of float32 (2**-23 each)
RTOL_FLOOR = 4 * 2.0**-23
#: table -> column patterns measured as one rule: every class bound R_* of bounds.csv
PATTERN_RULES = {"bounds.csv": ("R_*",)}


def merged(deviations: list[dict]) -> dict:
    """One deviation of several columns in one run: the largest of each measure."""
    if all(d["kind"] == "exact" for d in deviations):
        return {"kind": "exact", "differ": max(d["differ"] for d in deviations)}
    floats = [d for d in deviations if d["kind"] == "float"]
    return {
        "kind": "float",
        **{k: max(d[k] for d in floats) for k in ("rel", "abs", "nan_mismatch", "nan_rows")},
        "differ": max(d["differ"] for d in deviations),
    }


def by_rule(table: str, columns: dict) -> dict:
    """{entry: {run: deviation}}: each column alone, except those under one of the table's
    PATTERN_RULES, merged into the pattern's entry (placed where its first column was)."""
    groups: dict[str, list[dict]] = {}
    for col, by_run in columns.items():
        entry = next((p for p in PATTERN_RULES.get(table, ()) if fnmatchcase(col, p)), col)
        groups.setdefault(entry, []).append(by_run)
    return {
        entry: {run: merged([g[run] for g in group]) for run in group[0]}
        for entry, group in groups.items()
    }


def column_deviation(ref: pd.Series, run: pd.Series) -> dict:
    """{"kind", "rel", "abs", "differ"}: the largest relative deviation over the large values,
    the largest absolute one over the small values, and the number of differing rows."""
    if not pd.api.types.is_float_dtype(ref.dtype):
        a, b = ref.to_numpy(dtype=object), run.to_numpy(dtype=object)
        differ = sum(not (x == y or (pd.isna(x) and pd.isna(y))) for x, y in zip(a, b))
        return {"kind": "exact", "differ": int(differ)}
    r, v = ref.to_numpy(float), run.to_numpy(float)
    both_nan = np.isnan(r) & np.isnan(v)
    one_nan = np.isnan(r) ^ np.isnan(v)
    finite = ~(np.isnan(r) | np.isnan(v))
    d = np.where(finite, np.abs(v - r), 0.0)
    d = np.where(finite & (r == v), 0.0, d)  # inf == inf
    scale = np.nanmax(np.abs(np.where(np.isfinite(r), r, np.nan))) if np.isfinite(r).any() else 0
    large = finite & (np.abs(r) >= SMALL_SHARE * scale) & (r != 0)
    small = finite & ~large
    with np.errstate(invalid="ignore", divide="ignore"):
        rel = float(np.max(d[large] / np.abs(r[large]), initial=0.0))
    return {
        "kind": "float",
        "rel": rel,
        "abs": float(np.max(d[small], initial=0.0)),
        "differ": int(np.count_nonzero(d > 0) + np.count_nonzero(one_nan)),
        "nan_mismatch": int(np.count_nonzero(one_nan)),
        "nan_rows": int(np.count_nonzero(both_nan)),
    }


def measure(ref_run: Path, runs: list[Path]) -> dict:
    """{table: {column: {run name: deviation}}} over the reference run's CSV tables."""
    out: dict = {}
    for ref_path in sorted((ref_run / "tables").glob("*.csv")):
        ref = pd.read_csv(ref_path)
        table = out.setdefault(ref_path.name, {})
        for run in runs:
            other = pd.read_csv(run / "tables" / ref_path.name)
            if list(other.columns) != list(ref.columns) or len(other) != len(ref):
                raise SystemExit(
                    f"{run}/{ref_path.name}: columns or row count differ from the reference"
                )
            for col in ref.columns:
                table.setdefault(col, {})[run.name] = column_deviation(ref[col], other[col])
    return out


def tolerance_of(by_run: dict, safety: float) -> tuple[dict | str, str]:
    """(the YAML value, the comment) of one column from its deviations in every run."""
    kinds = {d["kind"] for d in by_run.values()}
    worst_run = max(
        by_run,
        key=lambda k: (by_run[k].get("rel", 0), by_run[k].get("abs", 0), by_run[k]["differ"]),
    )
    if kinds == {"exact"}:
        differ = max(d["differ"] for d in by_run.values())
        note = "measured: equal in every run" if not differ else f"DIFFERS in {differ} rows"
        return "exact", note
    rel = max(d["rel"] for d in by_run.values())
    ab = max(d["abs"] for d in by_run.values())
    nan_bad = max(d["nan_mismatch"] for d in by_run.values())
    tol = {"rtol": max(safety * rel, RTOL_FLOOR), "atol": safety * ab}
    if rel == 0 and ab == 0:
        return tol, "measured: equal in every run (rtol floor)"
    note = f"measured: rel {rel:.2e}, abs {ab:.2e} ({worst_run})"
    return tol, note + (f"; NaN mismatches {nan_bad}" if nan_bad else "")


def tolerance_yaml(measured: dict, safety: float, runs: list[str], ref: str) -> str:
    lines = [
        "# Per-column tolerances of `entropic-bound verify` (written by",
        "# benchmarks/measure_tolerances.py; docs/reproducibility.md explains each number).",
        f"# Reference run: {ref}; runs on other code paths: {', '.join(runs)}.",
        "# A value v agrees with the reference r when |v - r| <= atol + rtol*|r| (NaN only with NaN);",
        "# `exact` asks for equality. tolerance = safety_factor x the largest deviation measured.",
        f"safety_factor: {safety:g}",
    ]
    body, rtols, atols = [], [], []
    for table, columns in measured.items():
        body.append(f"  {table}:")
        for col, by_run in by_rule(table, columns).items():
            tol, note = tolerance_of(by_run, safety)
            col = f'"{col}"' if col in PATTERN_RULES.get(table, ()) else col
            if tol == "exact":
                body.append(f"    {col}: exact  # {note}")
            else:
                rtols.append(tol["rtol"])
                atols.append(tol["atol"])
                body.append(
                    f"    {col}: {{rtol: {tol['rtol']:.1e}, atol: {tol['atol']:.1e}}}  # {note}"
                )
    lines.append(
        "# a float column not listed below (a new table's): the largest rtol and atol below"
    )
    lines.append(
        f"float_default: {{rtol: {max(rtols, default=RTOL_FLOOR):.1e}, "
        f"atol: {max(atols, default=0.0):.1e}}}"
    )
    lines.append("tables:")
    return "\n".join(lines + body) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("reference_run")
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--safety", type=float, default=10.0)
    ap.add_argument("--out", default=str(REPO / "benchmarks" / "reference" / "tolerances.yaml"))
    ap.add_argument("--json", help="also write the measured deviations here")
    args = ap.parse_args(argv)
    ref, runs = Path(args.reference_run), [Path(r) for r in args.runs]
    measured = measure(ref, runs)
    Path(args.out).write_text(
        tolerance_yaml(measured, args.safety, [r.name for r in runs], ref.name)
    )
    summary = {
        table: {
            run.name: {
                "max_rel": max((c[run.name].get("rel", 0.0) for c in cols.values()), default=0.0),
                "max_abs_small": max(
                    (c[run.name].get("abs", 0.0) for c in cols.values()), default=0.0
                ),
                "differing_exact_columns": sorted(
                    k
                    for k, c in cols.items()
                    if c[run.name]["kind"] == "exact" and c[run.name]["differ"]
                ),
            }
            for run in runs
        }
        for table, cols in measured.items()
    }
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "reference": ref.name,
                    "runs": [r.name for r in runs],
                    "safety": args.safety,
                    "per_table": summary,
                    "per_column": measured,
                },
                indent=1,
                sort_keys=True,
            )
            + "\n"
        )
    json.dump(summary, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
