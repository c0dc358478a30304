"""Assert that two runs published the same tables, value for value.

    python tests/cluster/compare_tables.py results/<run_a> results/<run_b>

Every CSV and parquet file under <run>/tables/ is read and compared exactly (same file set, same
columns in the same order, same dtypes, equal values; NaN equals NaN). The ``.prov.json`` sidecars
and the parquet schema metadata are not compared: they record the run_name and the commit.
Exit status 0 and one summary line when everything agrees, 1 and the differences otherwise.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from entropic_bound.core.runner import finish

SUFFIXES = (".csv", ".parquet")


def read(path: Path) -> pd.DataFrame:
    return pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path)


def tables(run_dir: Path) -> dict[str, Path]:
    tdir = run_dir / "tables"
    return {
        p.relative_to(tdir).as_posix(): p
        for p in sorted(tdir.rglob("*"))
        if p.is_file() and p.suffix in SUFFIXES
    }


def compare(a: Path, b: Path) -> tuple[list[str], int, int]:
    """(problems, number of tables compared, number of values compared)."""
    ta, tb = tables(a), tables(b)
    problems = []
    if not ta:
        problems.append(f"{a}/tables holds no CSV or parquet table")
    for name in sorted(ta.keys() - tb.keys()):
        problems.append(f"{name}: only in {a}")
    for name in sorted(tb.keys() - ta.keys()):
        problems.append(f"{name}: only in {b}")
    values = 0
    common = sorted(ta.keys() & tb.keys())
    for name in common:
        x, y = read(ta[name]), read(tb[name])
        try:
            pd.testing.assert_frame_equal(x, y, check_exact=True, obj=name)
        except AssertionError as exc:
            problems.append(" ".join(str(exc).split())[:400])
        values += x.size
    return problems, len(common), values


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    a, b = Path(args[0]), Path(args[1])
    problems, n_tables, n_values = compare(a, b)
    if problems:
        print(f"tables of {a} and {b} differ:", file=sys.stderr)
        for p in problems:
            print(f"  {p}", file=sys.stderr)
        return 1
    print(f"{n_tables} tables ({n_values} values) of {a} and {b} are equal, value for value")
    return 0


if __name__ == "__main__":
    # finish: flush, then exit without interpreter teardown, which can abort in Arrow's thread
    # pools after the comparison is done (apache/arrow#34314; it once failed CI this way)
    finish(main())
