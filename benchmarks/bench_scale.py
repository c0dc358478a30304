"""Cost growth with d: one JSON line per d of a scale list, then one line of fitted exponents.

Reads the runs that `snakemake scale` made (one results/<run_name>/ per config of
config/scale/scales.yaml, or --scale-list); it trains nothing itself. Per d:
  seconds            per stage: tasks, predict, frontier, training from Snakemake's benchmark
                     files (the jobs' wall seconds, summed: the work, not the end-to-end wall of
                     a run whose jobs overlap); analysis timed here (run_analyses + evaluate_claims
                     on the run's cached tables, median of --repeats)
  students           students trained (rows of train_metrics), and student_steps (their steps)
  engine_gflops      matmul GFLOP/s of the attention-class training jobs (L3, L4, Lλ sweeps;
                     bench_train.engine_matmul_flops counts their products) over those jobs' seconds
  peak_fraction      engine_gflops over an fp32 GEMM peak measured here at the run's thread
                     count (median of --repeats, taken between the analysis repeats)
The last line fits seconds ∝ d^k per stage (least squares on log-log over the d's present).
The jobs ran under whatever load the machine had; compare d's of one study, not machines.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch
import yaml

sys.path.insert(0, str(Path(__file__).parent))
from bench_train import engine_matmul_flops, gemm_peak_gflops  # noqa: E402

from entropic_bound.analysis import run_analyses  # noqa: E402
from entropic_bound.claims import evaluate_claims, load_tables  # noqa: E402
from entropic_bound.config.load import class_optim, load_run_config, load_scale_list  # noqa: E402
from entropic_bound.core.rungs import parse_rung  # noqa: E402
from entropic_bound.train.backends import factored_ranks  # noqa: E402

STAGES = ("tasks", "predict", "frontier", "training", "analysis")


def _bench_seconds(paths) -> float:
    return float(sum(pd.read_csv(p, sep="\t")["s"].sum() for p in paths))


def stage_seconds(run: Path) -> dict[str, float]:
    b = run / "benchmarks"
    return {
        "tasks": _bench_seconds(sorted((b / "tasks").glob("*.tsv"))),
        # the predict jobs (one per random stream at d >= 32) and their merge
        "predict": _bench_seconds([*sorted((b / "predict").glob("*.tsv")), b / "predict.tsv"]),
        "frontier": _bench_seconds([b / "frontier.tsv"]),
        "training": _bench_seconds(sorted((b / "train").glob("*.tsv"))),
    }


def analysis_seconds(cfg: dict, claims: dict, run: Path) -> float:
    t = load_tables(run / "tables")
    p = cfg["predict"]
    t0 = time.perf_counter()
    out = run_analyses(
        t["data_only_predictions"],
        t["train_metrics"],
        t["train_dynamics"],
        estimator=claims["estimator"],
        epsilon=claims["epsilon"],
        taus=p["taus"],
        tol=p["tol"],
    )
    evaluate_claims({**t, **out}, claims)
    return time.perf_counter() - t0


def engine_rate(cfg: dict, run: Path) -> tuple[float, float]:
    """(GFLOP/s, seconds) of the attention-class sweep jobs."""
    m = pd.read_parquet(run / "tables" / "train_metrics.parquet")
    n, d = cfg["task"]["n"], cfg["task"]["d"]
    eval_seqs = cfg["task"]["n_train"] + cfg["task"]["n_test"]
    flops, secs = 0.0, 0.0
    for rung, g in m[~m["static_student"].astype(bool)].groupby("rung"):
        family = parse_rung(rung)[0]
        if family not in ("L3", "L4", "Lam"):
            continue
        batch = class_optim(cfg, family)["batch"]
        fused = (g["backend"] == "fused").to_numpy()
        fr = factored_ranks(g["rank"], rung, n, d, cfg["train"].get("products", "auto")) * fused
        flops += engine_matmul_flops(n, d, batch, g["steps"], fr, eval_seqs)
        # the rung's training jobs: {rung}_c<chunk> (sweep and static students in one job since
        # the merge, the static ones a few % of it), {rung}_sweep_c<chunk> in older runs
        jobs = [*(run / "benchmarks" / "train").glob(f"{rung}_c*.tsv")]
        jobs += (run / "benchmarks" / "train").glob(f"{rung}_sweep_*.tsv")
        secs += _bench_seconds(sorted(jobs))
    return (flops / secs / 1e9 if secs else float("nan")), secs


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale-list", default="config/scale/scales.yaml")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    claims = yaml.safe_load(Path("config/claims.yaml").read_text())
    rows = []
    for s in load_scale_list(args.scale_list):
        cfg = load_run_config(s["config"])
        run = Path("results") / cfg["run_name"]
        if not (run / "tables" / "claims.csv").exists():
            print(json.dumps({"d": s["d"], "missing": f"{run} has no claims; run it first"}))
            continue
        torch.set_num_threads(cfg["threads"])
        secs = stage_seconds(run)
        peaks, analyses = [], []
        for _ in range(args.repeats):  # interleaved: the peak is measured beside the work
            peaks.append(gemm_peak_gflops())
            analyses.append(analysis_seconds(cfg, claims, run))
        secs["analysis"] = statistics.median(analyses)
        m = pd.read_parquet(run / "tables" / "train_metrics.parquet", columns=["steps"])
        gflops, _ = engine_rate(cfg, run)
        peak = statistics.median(peaks)
        row = {
            "d": s["d"],
            "n": cfg["task"]["n"],
            "run": str(run),
            "seconds": {k: round(v, 2) for k, v in secs.items()},
            "students": len(m),
            "student_steps": int(m["steps"].sum()),
            "engine_gflops": round(gflops, 2),
            "gemm_peak_gflops": round(peak, 1),
            "peak_fraction": round(gflops / peak, 3),
            "threads": torch.get_num_threads(),
            "ranks": cfg["train"].get("ranks", "all"),
        }
        rows.append(row)
        print(json.dumps(row), flush=True)
    if len(rows) >= 2:
        logd = np.log([r["d"] for r in rows])
        fit = {}
        for stage in STAGES:
            y = np.array([r["seconds"][stage] for r in rows])
            ok = y > 0
            fit[stage] = (
                round(float(np.polyfit(logd[ok], np.log(y[ok]), 1)[0]), 2)
                if ok.sum() >= 2
                else None
            )
        print(json.dumps({"cost_exponent_in_d": fit, "ds": [r["d"] for r in rows]}))


if __name__ == "__main__":
    main()
