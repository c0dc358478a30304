"""Verdict by scale under every registration (v1, v2, v3), from runs' claims tables.

    python benchmarks/scale_report.py 8=results/scale_d8 16=results/paper \
        32=results/scale_d32 48=benchmarks/registered/v3_d48_seed61206

Each argument is ``d=PATH``: a run directory (its tables/claims.csv) or a folder holding a
claims.csv (a registered run's committed outputs, benchmarks/registered/). Prints the claim × d
grid of each registration (entropic_bound.exploratory.scale: each cell is that run's verdict and
the claim's own headline value). Nothing is recomputed; exploratory, no verdict of its own.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from entropic_bound.exploratory.scale import scale_markdown, verdict_by_scale


def claims_of(path: Path) -> pd.DataFrame:
    for p in (path / "tables" / "claims.csv", path / "claims.csv", path):
        if p.is_file():
            return pd.read_csv(p)
    raise ValueError(f"{path}: no claims.csv (a run directory or a registered folder)")


def parse(arg: str) -> tuple[int, Path]:
    d, sep, path = arg.partition("=")
    if not sep or not d.isdigit():
        raise ValueError(f"{arg!r}: expected d=PATH, e.g. 16=results/paper")
    return int(d), Path(path)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", help="d=PATH, one per scale")
    args = ap.parse_args(argv)
    try:
        runs = dict(parse(a) for a in args.runs)
        table = verdict_by_scale({d: {"claims": claims_of(p)} for d, p in runs.items()})
    except (ValueError, OSError) as exc:
        print(f"scale_report: error: {exc}", file=sys.stderr)
        return 2
    print(scale_markdown(table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
