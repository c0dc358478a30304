"""Rank search against the full sweep, on a config's tasks: one JSON line per rung.

    python benchmarks/search_vs_sweep.py --sweep-run results/paper [--config config/config.yaml]

Retrains every rung's sweep jobs with ``train.ranks: search`` and compares with the sweep's
tables of a finished run of the same config (``<sweep-run>/train/<rung>/sweep_c*.metrics.parquet``):
``knees_equal`` (r_emp of every task, read from the tables as analysis.empirical_knees does),
``max_abs_dR`` (the largest |R_search − R_sweep| over every student the search trained; 0 on
the fused backend, where a student's arithmetic does not depend on its batch), and the number of
students each trained and the search's seconds.
"""

from __future__ import annotations

import argparse
import copy
import json
import time
from pathlib import Path

import pandas as pd
import torch

from entropic_bound.config.load import load_config
from entropic_bound.core.io import read_table
from entropic_bound.tasks.grid import chunks_of_rung
from entropic_bound.tasks.make import task_specs
from entropic_bound.tasks.stage import write_tasks
from entropic_bound.train.stage import load_tasks, train_chunk


def knees(metrics: pd.DataFrame, epsilon: float) -> dict[str, float]:
    med = metrics.groupby(["task_id", "rank"])["R"].median().reset_index()
    hit = med[med["R"] <= epsilon].groupby("task_id")["rank"].min()
    return {t: float(hit.get(t, float("nan"))) for t in metrics["task_id"].unique()}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="config/config.yaml")
    ap.add_argument("--sweep-run", required=True, help="results/<run_name> of a finished sweep run")
    ap.add_argument(
        "--tasks-dir", default=None, help="where to write task files (default: a temp dir)"
    )
    ap.add_argument("--rungs", nargs="*", default=None)
    args = ap.parse_args(argv)
    cfg = load_config(args.config)
    torch.set_num_threads(cfg["threads"])
    search_cfg = copy.deepcopy(cfg)
    search_cfg["train"]["ranks"] = "search"
    eps = cfg["train"]["epsilon"]
    tasks_dir = Path(args.tasks_dir or f"/tmp/search_vs_sweep_{cfg['run_name']}")
    rungs = args.rungs or sorted({s.rung for s in task_specs(cfg)})
    for rung in rungs:
        out = tasks_dir / rung
        out.mkdir(parents=True, exist_ok=True)
        if not list(out.glob("*.npz")):
            write_tasks(cfg, rung, out)
        found, sweep, seconds = [], [], 0.0
        for c, chunk in enumerate(chunks_of_rung(cfg, rung)):
            paths = [out / f"{s.task_id}.npz" for s in chunk]
            t0 = time.perf_counter()
            found.append(train_chunk(search_cfg, rung, "sweep", load_tasks(paths))["metrics"])
            seconds += time.perf_counter() - t0
            sweep.append(
                read_table(Path(args.sweep_run) / "train" / rung / f"sweep_c{c}.metrics.parquet")
            )
        f, s = pd.concat(found), pd.concat(sweep)
        both = f.merge(s, on=["task_id", "rank", "seed"], suffixes=("", "_sweep"))
        kf, ks = knees(f, eps), knees(s, eps)
        print(
            json.dumps(
                {
                    "rung": rung,
                    "tasks": len(ks),
                    "knees_equal": kf == ks,
                    "knees_search": kf,
                    "students_search": len(f),
                    "students_sweep": len(s),
                    "matched": len(both),
                    "max_abs_dR": float((both["R"] - both["R_sweep"]).abs().max()),
                    "search_seconds": round(seconds, 1),
                    "threads": torch.get_num_threads(),
                }
            ),
            flush=True,
        )


if __name__ == "__main__":
    main()
