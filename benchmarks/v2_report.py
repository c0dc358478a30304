"""Registration v2 across runs: the class bounds at r* − 1 and the verdicts of v1 and v2 by scale.

    python benchmarks/v2_report.py results/scale_d8 results/paper results/scale_d32 ...

Reads each run's tables/bounds.csv and tables/claims.csv (d from the run's stored config, or
its provenance) and prints Markdown: (a) R*_c(r* − 1) of every class at the run's largest r*
(mean over task seeds, the largest L-BFGS residual beside it) and ε_task there; (b) the
verdict-by-scale grids of both registrations (entropic_bound.exploratory.scale), each claim's
own headline in every cell. Nothing is recomputed: both come from the runs' tables.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd

from entropic_bound.core.rungs import rung_sort_key
from entropic_bound.exploratory.scale import read_run_tables, scale_markdown, verdict_by_scale


def run_d(run: Path) -> int:
    """d of a run, from the provenance its claims table carries."""
    prov = json.loads((run / "tables" / "claims.csv.prov.json").read_text())
    if "config" in prov:
        return int(prov["config"]["task"]["d"])
    summary = json.loads((run / "provenance.json").read_text())
    return int(summary["config"]["task"]["d"])


def bounds_at_knee(runs: dict[int, Path]) -> str:
    rows = []
    for d, run in runs.items():
        b = pd.read_csv(run / "tables" / "bounds.csv")
        top = b["r_star"].max()
        k = b[(b["r_star"] == top) & (b["rank"] == top - 1)]
        for rung, g in k.groupby("rung"):
            rows.append(
                {
                    "rung": rung,
                    "d": d,
                    "cell": f"{g['R_bound'].mean():.3g} (r* = {top}; ∇ {g['grad_norm'].max():.1g})",
                }
            )
    t = pd.DataFrame(rows).pivot(index="rung", columns="d", values="cell")
    t = t.loc[sorted(t.index, key=rung_sort_key)]
    head = "| class | " + " | ".join(f"d = {d}" for d in t.columns) + " |"
    lines = [head, "|---|" + "---|" * len(t.columns)]
    for rung, r in t.iterrows():
        lines.append(
            f"| {rung} | " + " | ".join(str(v) if isinstance(v, str) else "—" for v in r) + " |"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", type=Path, help="results/<run_name> directories")
    args = ap.parse_args(argv)
    runs = {run_d(r): r for r in args.runs}
    runs = dict(sorted(runs.items()))
    print(
        "R*_c(r* − 1) at the largest r* of each run (mean over task seeds; largest residual ∇):\n"
    )
    print(bounds_at_knee(runs))
    print()
    print(scale_markdown(verdict_by_scale({d: read_run_tables(r) for d, r in runs.items()})))
    return 0


if __name__ == "__main__":
    sys.exit(main())
