"""Did training converge where it must? One run's students against ε (the calibration check).

    python benchmarks/convergence.py results/<run_name>

Per rung, the rank-r students with r ≥ r* (every one must reach R ≤ ε: "convergence is
correctness"), how many did, their largest R and most steps; then the students below r* that
reach ε anyway (a knee below r*), and the run's totals. Reads tables/train_metrics.parquet;
ε is --epsilon (default 1e-3, the ε of every shipped config).
Exit status 1 when a student with r ≥ r* misses ε.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", type=Path, help="results/<run_name>")
    ap.add_argument("--epsilon", type=float, default=1e-3)
    args = ap.parse_args(argv)
    m = pd.read_parquet(args.run / "tables" / "train_metrics.parquet")
    eps = args.epsilon
    trained = m[~m.static_student.astype(bool)]
    above = trained[trained["rank"] >= trained["r_star"]]
    below = trained[trained["rank"] < trained["r_star"]]
    per_rung = above.groupby("rung").agg(
        students=("R", "size"),
        reach_eps=("R", lambda r: int((r <= eps).sum())),
        max_R=("R", "max"),
        max_steps=("steps", "max"),
    )
    print(f"students with r >= r* (each must reach R <= {eps:g}):")
    print(per_rung.to_string())
    knee_below = below[below.R <= eps]
    print(f"students with r < r* and R <= {eps:g}: {len(knee_below)} of {len(below)}")
    if len(knee_below):
        print(knee_below[["rung", "r_star", "rank", "seed", "R", "steps"]].to_string(index=False))
    print(
        f"students {len(m)} ({int(m.static_student.sum())} static), "
        f"student-steps {int(m.steps.sum())}"
    )
    return int(bool((above.R > eps).any()))


if __name__ == "__main__":
    sys.exit(main())
