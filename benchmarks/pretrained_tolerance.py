"""The pretrained heads' knees at looser tolerances (exploratory, beside registration H3, whose
verdicts are read at the registered 1 %).

A head's knee is the least QK rank whose output error is ≤ a tolerance of uniform attention's
(docs/method.md §9e). H3 reads it at 1 %; every head's whole curve e(r) under both truncations
is committed (benchmarks/registered/h3_pretrained/curves/), so the knee at any other tolerance is
read from it without running a model. Per model, truncation and tolerance: the knees' quartiles,
and the share of the query-key parameters the plain knees would remove.

    python benchmarks/pretrained_tolerance.py    # writes benchmarks/results/pretrained_knee_by_tolerance.csv
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]
CURVES = REPO / "benchmarks" / "registered" / "h3_pretrained" / "curves"
OUT = REPO / "benchmarks" / "results" / "pretrained_knee_by_tolerance.csv"
TOLERANCES = (0.01, 0.02, 0.05, 0.1, 0.25)


def knees(curves: pd.DataFrame, tolerance: float) -> pd.DataFrame:
    """Each head's least r with e(r) ≤ ``tolerance``, one column per truncation."""
    under = curves[curves["e"] <= tolerance]
    return under.groupby(["layer", "head", "metric"])["r"].min().unstack("metric")


def main() -> pd.DataFrame:
    rows = []
    for path in sorted(CURVES.glob("*.csv")):
        curves = pd.read_csv(path)
        d_head = int(curves["r"].max())
        for tol in TOLERANCES:
            k = knees(curves, tol)
            for metric in k.columns:
                q = k[metric].quantile([0.25, 0.5, 0.75])
                rows.append(
                    {
                        "model": path.stem,
                        "tolerance": tol,
                        "truncation": metric,
                        "heads": int(k[metric].notna().sum()),
                        "q25": q[0.25],
                        "median": q[0.5],
                        "q75": q[0.75],
                        "d_head": d_head,
                        "rank_removed_share": float((d_head - k[metric]).sum() / (d_head * len(k))),
                    }
                )
    table = pd.DataFrame(rows)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(OUT, index=False)
    return table


if __name__ == "__main__":
    print(main().to_string(index=False))
