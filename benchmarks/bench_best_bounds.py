"""Time and peak memory of one static-rung best-bounds job (rule best_bounds, bounds/best.py) at a
config's scale, without its training: the job's own work on the rung's task files, v2's rows at
every rank the job reads, and stand-in students (seeded random factors at each rank, one per
student seed: the same number and shapes of starts as trained students give, so the same
work; their values differ, so the R columns are not the run's).

    python benchmarks/bench_best_bounds.py --config config/large.yaml --rung L1 --tasks /tmp/t

makes the rung's task files in --tasks when absent (the tasks stage's own files), then runs
``rung_best_bounds`` in this process and prints one JSON line: CPU seconds of the job's work,
wall seconds, peak RSS of the process (ru_maxrss, MB) and the table's sha256 (for comparing two
versions of the code on the same inputs). Run it under ``/usr/bin/time -v`` for the kernel's
view of the peak, and nice'd with one thread on a shared machine.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import resource
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from entropic_bound.bounds.best import rung_best_bounds
from entropic_bound.bounds.stage import COLUMNS, bound_ranks
from entropic_bound.bounds.starts import random_start
from entropic_bound.config.load import load_run_config
from entropic_bound.core.io import write_npz
from entropic_bound.tasks.files import task_file_arrays
from entropic_bound.tasks.grid import specs_of_rung
from entropic_bound.train.factors import factors_frame

#: start indices of the stand-in students (the registered random start is index 0)
_STUDENT_INDEX = 1000


def task_files(cfg: dict, rung: str, folder: Path) -> list[Path]:
    """The rung's task files in ``folder``, made as the tasks stage makes them when absent."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for spec in specs_of_rung(cfg, rung):
        path = folder / f"{spec.task_id}.npz"
        if not path.exists():
            write_npz(path, **task_file_arrays(spec, cfg["task"].get("store_data", "auto")))
        paths.append(path)
    return paths


def _meta(path) -> dict:
    with np.load(path, allow_pickle=False) as z:
        return json.loads(str(z["meta"]))


def inputs(cfg: dict, rung: str, paths) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(v2's rows at the ranks of bounds.ranks, stand-in students' factors at each)."""
    mode = cfg["bounds"]["ranks"] if rung in cfg["bounds"]["deficiency_rungs"] else "knee"
    rows, students = [], []
    for path in paths:
        meta = _meta(path)
        for r in bound_ranks(meta["r_star"], mode):
            rows.append(
                dict.fromkeys(COLUMNS, np.nan)
                | {"task_id": meta["task_id"], "rung": rung, "r_star": meta["r_star"]}
                | {"task_seed": meta["seed"], "rank": r, "method": "stand-in"}
            )
            for seed in cfg["train"]["student_seeds"]:
                s = random_start(meta, r, _STUDENT_INDEX + seed, cfg["seed"])
                students.append({"task_id": meta["task_id"], "rank": r, "seed": seed} | vars(s))
    return pd.DataFrame(rows, columns=list(COLUMNS)), factors_frame(students)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", required=True)
    ap.add_argument("--rung", default="L1", help="a static rung: L0, L1 or L2")
    ap.add_argument("--tasks", required=True, help="folder of the rung's task files")
    ap.add_argument("--r-star", default="", help="comma-separated r* to keep (default: all)")
    ap.add_argument(
        "--static-iter",
        type=int,
        help="bounds.best.static_iter instead of the config's: a few iterations reach the job's "
        "peak memory (every chunk's first evaluations) in a fraction of its time",
    )
    args = ap.parse_args()
    torch.set_num_threads(1)
    cfg = load_run_config(args.config)
    if args.static_iter is not None:
        cfg["bounds"]["best"]["static_iter"] = args.static_iter
    paths = task_files(cfg, args.rung, Path(args.tasks))
    if args.r_star:
        keep = {int(r) for r in args.r_star.split(",")}
        paths = [p for p in paths if _meta(p)["r_star"] in keep]
    v2, factors = inputs(cfg, args.rung, paths)
    cpu, wall = time.process_time(), time.perf_counter()
    table = rung_best_bounds(cfg, args.rung, paths, v2, factors, None)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    digest = hashlib.sha256(table.to_csv(index=False).encode()).hexdigest()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        json.dumps(
            {"config": args.config, "rung": args.rung, "tasks": len(paths), "v2_rows": len(v2)}
            | {"static_iter": cfg["bounds"]["best"]["static_iter"]}
            | {"cpu_s": round(cpu, 1), "wall_s": round(wall, 1), "peak_rss_mb": round(peak)}
            | {"sha256": digest, "R_lbfgs_student": table["R_lbfgs_student"].tolist()}
        )
    )


if __name__ == "__main__":
    main()
