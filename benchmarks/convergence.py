"""Did training converge where it must? One run's students against ε_task (the calibration check).

    python benchmarks/convergence.py results/<run_name>

Per rung, the rank-r students with r ≥ r* (every one must reach R ≤ ε_task: "convergence is
correctness"), how many did, their largest R relative to ε_task and most steps; then the students
below r* that reach ε_task anyway (a knee below r*), and the run's totals. Reads
tables/train_metrics.parquet and, when the run has it, tables/bounds.csv: each task's target is
its ε_task = min(ε, ½·R*_c(r* − 1)) (registration v2, docs/method.md §5b); without the bounds
table every task's target is ε. ε is --epsilon (default 1e-3, the ε of every shipped config).
Exit status 1 when a student with r ≥ r* misses its target.
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
    ap.add_argument("--factor", type=float, default=0.5, help="ε_task factor (claims.yaml v2)")
    args = ap.parse_args(argv)
    m = pd.read_parquet(args.run / "tables" / "train_metrics.parquet")
    trained = m[~m.static_student.astype(bool)].copy()
    bounds_path = args.run / "tables" / "bounds.csv"
    if bounds_path.exists():
        from entropic_bound.bounds.stage import task_epsilons

        tasks = trained.drop_duplicates("task_id")[["task_id", "r_star"]]
        eps_of = dict(
            zip(
                tasks["task_id"],
                task_epsilons(
                    pd.read_csv(bounds_path), tasks.to_dict("records"), args.epsilon, args.factor
                ),
            )
        )
        trained["eps"] = trained["task_id"].map(eps_of)
        print(f"targets: ε_task per task (bounds.csv), min {trained['eps'].min():.3g}")
    else:
        trained["eps"] = args.epsilon
        print(f"targets: ε = {args.epsilon:g} (no bounds.csv)")
    trained["R_over_eps"] = trained["R"] / trained["eps"]
    above = trained[trained["rank"] >= trained["r_star"]]
    below = trained[trained["rank"] < trained["r_star"]]
    per_rung = above.groupby("rung").agg(
        students=("R", "size"),
        reach_eps=("R_over_eps", lambda r: int((r <= 1).sum())),
        max_R_over_eps=("R_over_eps", "max"),
        max_steps=("steps", "max"),
    )
    print("students with r >= r* (each must reach R <= ε_task):")
    print(per_rung.to_string())
    knee_below = below[below.R_over_eps <= 1]
    print(f"students with r < r* and R <= ε_task: {len(knee_below)} of {len(below)}")
    if len(knee_below):
        print(knee_below[["rung", "r_star", "rank", "seed", "R", "steps"]].to_string(index=False))
    print(
        f"students {len(m)} ({int(m.static_student.sum())} static), "
        f"student-steps {int(m.steps.sum())}"
    )
    return int(bool((above.R_over_eps > 1).any()))


if __name__ == "__main__":
    sys.exit(main())
