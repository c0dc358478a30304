"""Compare the students of a GPU training stage with a CPU run's: the empirical knees and the risks.

    python benchmarks/compare_knees.py GPU_METRICS.csv results/<run> [--config CONFIG]

GPU_METRICS.csv is what `bench_gpu.py --metrics-out` writes (every GPU student's row of the
metrics table); results/<run> a CPU run of the same config (its train/*/*.metrics.parquet).
GPU results are not bitwise equal to CPU results (reductions run in another order, and with
train.ranks: search a different knee can send the search to other ranks), so this reports how
far they agree: one JSON line with the tasks whose r_emp (least rank of the own class with
median R ≤ ε) is the same, the tasks where it differs (with both knees), and, over the students
both trained (same task, class, rank, seed), the largest |log10 R_gpu/R_cpu| and how many of
them are on the same side of ε.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from entropic_bound.analysis import empirical_knees, risk_curves
from entropic_bound.config.load import load_config

KEYS = ["task_id", "student_class", "static_student", "rank", "seed"]


def cpu_metrics(run: Path) -> pd.DataFrame:
    files = sorted(run.glob("train/*/*.metrics.parquet"))
    if not files:
        sys.exit(f"compare_knees: no train/*/*.metrics.parquet under {run}")
    return pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)


def _knee(r: float) -> int | None:
    """A knee for JSON: the rank, or None where no trained rank reached ε."""
    return None if np.isnan(r) else int(r)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("gpu_metrics", type=Path)
    ap.add_argument("run", type=Path, help="results/<run> of a CPU run of the same config")
    ap.add_argument("--config", default="config/large.yaml", help="the config of both (its ε)")
    args = ap.parse_args(argv)
    eps = load_config(args.config)["train"]["epsilon"]
    gpu = pd.read_csv(args.gpu_metrics)
    cpu = cpu_metrics(args.run)
    cpu = cpu[cpu.task_id.isin(gpu.task_id.unique())]  # a GPU stage cut short: its tasks only
    for m in (gpu, cpu):
        m["static_student"] = m["static_student"].astype(bool)
    kg = empirical_knees(risk_curves(gpu), eps).set_index("task_id").r_emp
    kc = empirical_knees(risk_curves(cpu), eps).set_index("task_id").r_emp
    common = kg.index.intersection(kc.index)
    same = [t for t in common if kg[t] == kc[t] or (np.isnan(kg[t]) and np.isnan(kc[t]))]
    both = gpu.merge(cpu, on=KEYS, suffixes=("_gpu", "_cpu"))
    ratio = np.abs(np.log10(both.R_gpu.clip(lower=1e-30) / both.R_cpu.clip(lower=1e-30)))
    side = (both.R_gpu <= eps) == (both.R_cpu <= eps)
    print(
        json.dumps(
            {
                "tasks": len(common),
                "knees_equal": len(same),
                "knees_differ": {  # task: [GPU knee, CPU knee]
                    t: [_knee(kg[t]), _knee(kc[t])] for t in common if t not in same
                },
                "students_gpu": len(gpu),
                "students_both": len(both),
                "max_abs_log10_R_ratio": round(float(ratio.max()), 3) if len(both) else None,
                "median_abs_log10_R_ratio": round(float(ratio.median()), 4) if len(both) else None,
                "same_side_of_epsilon": f"{int(side.sum())}/{len(both)}",
                "epsilon": eps,
            }
        )
    )


if __name__ == "__main__":
    main()
