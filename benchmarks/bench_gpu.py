"""GPU benchmark (`make bench-gpu`): the paper-scale training stage on one GPU, against CPU.

Every training job of the config (default config/config.yaml, paper scale: every rung × {sweep,
static} × chunk) runs as `rule train` runs it (entropic_bound.train.stage.train_chunk on task files
written by the pipeline's own write_tasks), one after another in this process:

  gpu_stage_seconds   the whole training stage on the GPU (after one warm-up job)
  cpu_seconds, gpu_seconds, cpu_over_gpu
                      the jobs that fit in --cpu-budget seconds (in an order that mixes rungs
                      and kinds) on CPU with the config's `threads`, and the same jobs on GPU
  cpu_stage_seconds_estimate
                      gpu_stage_seconds x cpu_over_gpu (measured instead when every job fit)
  knee_agreement      tasks whose empirical knee r_emp (least rank with median R <= epsilon)
                      is the same on GPU and CPU, over the tasks both trained (GPU results are
                      not bitwise equal to CPU's; the knees should be)

One JSON line on stdout; progress on stderr. Finishes within 5 minutes on one data-centre GPU
at paper scale (task files ~15 s, GPU stage ~1-2 min, CPU budget 120 s). Without a GPU it stops
with one line; `--device cpu` runs the same measurement on CPU only (a smoke test of this script).

The large config (d = n = 64): `--config config/large.yaml --gpu-chunk 128 --task-threads 8`
(its `chunk: 8` is sized for CPU caches; a GPU wants large batched products), with
`--gpu-deadline` to stop the GPU stage after that many seconds (`gpu_jobs_done` says how far it
got; the stage time then covers those jobs only).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from entropic_bound.analysis import empirical_knees, risk_curves
from entropic_bound.config.load import load_config
from entropic_bound.tasks.grid import chunks_of_rung
from entropic_bound.tasks.make import task_specs
from entropic_bound.tasks.stage import write_tasks
from entropic_bound.train.stage import load_tasks, train_chunk


def log(msg: str) -> None:
    print(f"[bench_gpu] {msg}", file=sys.stderr, flush=True)


def training_jobs(cfg: dict, task_dir: Path) -> list[tuple[str, str, int, list[Path]]]:
    """(rung, kind, chunk, task files) of every training job, in the order of the pipeline."""
    rungs = list(dict.fromkeys(s.rung for s in task_specs(cfg)))
    return [
        (rung, kind, c, [task_dir / f"{s.task_id}.npz" for s in chunk])
        for rung in rungs
        for kind in ("sweep", "static")
        for c, chunk in enumerate(chunks_of_rung(cfg, rung))
    ]


def mixed_order(jobs: list) -> list:
    """Interleave the job list so that any prefix holds every kind and many rungs."""
    sweeps = [j for j in jobs if j[1] == "sweep"]
    statics = [j for j in jobs if j[1] == "static"]
    out = []
    for i in range(max(len(sweeps), len(statics))):
        out += sweeps[i : i + 1] + statics[i : i + 1]
    return out


def with_chunk(cfg: dict, chunk: int | None) -> dict:
    """``cfg`` with every student class's ``chunk`` (students per pass) set to ``chunk``."""
    if chunk is None:
        return cfg
    classes = {k: {**v, "chunk": chunk} for k, v in cfg["train"]["classes"].items()}
    return {**cfg, "train": {**cfg["train"], "classes": classes}}


def run_job(cfg: dict, job, device: str) -> tuple[float, pd.DataFrame]:
    rung, kind, _, paths = job
    t = time.perf_counter()
    out = train_chunk({**cfg, "device": device}, rung, kind, load_tasks(paths))
    if device == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - t, out["metrics"]


def knees(metrics: pd.DataFrame, epsilon: float) -> pd.Series:
    """r_emp per task, as the analysis defines it (least rank of the own class whose median R
    over student seeds is <= epsilon), indexed by task_id."""
    return empirical_knees(risk_curves(metrics), epsilon).set_index("task_id").r_emp


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="config/config.yaml", help="pipeline config (paper scale)")
    ap.add_argument(
        "--cpu-budget",
        type=float,
        default=120.0,
        help="seconds of CPU training to measure the ratio on (default 120; 0: no CPU jobs)",
    )
    ap.add_argument(
        "--device",
        default="cuda",
        choices=["cuda", "cpu"],
        help="cpu: run everything on CPU (tests this script on a machine without GPU)",
    )
    ap.add_argument(
        "--deadline",
        type=float,
        default=280.0,
        help="stop the CPU measurement once this many seconds have passed in all",
    )
    ap.add_argument(
        "--max-jobs", type=int, default=None, help="only the first N jobs (smoke tests)"
    )
    ap.add_argument(
        "--gpu-chunk",
        type=int,
        default=None,
        help="students per forward/backward pass on the GPU (default: the config's chunk)",
    )
    ap.add_argument(
        "--gpu-deadline",
        type=float,
        default=None,
        help="stop the GPU stage once it has run this many seconds, after at least one job "
        "(default: never)",
    )
    ap.add_argument(
        "--metrics-out",
        default=None,
        help="write the GPU students' metrics table here (CSV), e.g. to compare the knees "
        "with a CPU run's results/<run>/tables",
    )
    ap.add_argument(
        "--task-threads",
        type=int,
        default=None,
        help="torch threads while writing the task files (default: the config's threads)",
    )
    args = ap.parse_args(argv)
    if args.device == "cuda" and torch.version.cuda is None:
        sys.exit(
            f"bench_gpu: torch {torch.__version__} is a CPU-only build; install the CUDA build "
            "of the same version (docs/cluster.md, 'On a GPU'), or run with --device cpu"
        )
    if args.device == "cuda" and not torch.cuda.is_available():
        sys.exit(
            "bench_gpu: no CUDA device is visible (torch.cuda.is_available() is False); "
            "run it on a GPU machine, or with --device cpu to test the script"
        )
    cfg = load_config(args.config)
    threads = cfg["threads"]
    torch.set_num_threads(args.task_threads or threads)
    t_start = time.perf_counter()

    with tempfile.TemporaryDirectory(prefix="bench_gpu_") as tmp:
        task_dir = Path(tmp)
        t = time.perf_counter()
        rungs = list(dict.fromkeys(s.rung for s in task_specs(cfg)))
        for rung in rungs:
            write_tasks(cfg, rung, task_dir)
        tasks_s = time.perf_counter() - t
        torch.set_num_threads(threads)
        jobs = training_jobs(cfg, task_dir)[: args.max_jobs]
        log(f"{len(task_specs(cfg))} task files in {tasks_s:.1f} s; {len(jobs)} training jobs")

        # GPU: one warm-up job (CUDA context, kernels), then the whole stage
        dev = args.device
        gpu_cfg = with_chunk(cfg, args.gpu_chunk)
        warm = next((j for j in jobs if j[1] == "static"), jobs[0])  # a short job
        warm_s, _ = run_job(gpu_cfg, warm, dev)
        log(f"warm-up on {dev}: {warm_s:.1f} s")
        gpu_times, gpu_metrics = {}, []
        t_gpu = time.perf_counter()
        for job in jobs:
            over = (
                args.gpu_deadline is not None and time.perf_counter() - t_gpu >= args.gpu_deadline
            )
            if gpu_times and over:  # at least one job
                log(f"GPU deadline {args.gpu_deadline:.0f} s reached after {len(gpu_times)} jobs")
                break
            s, m = run_job(gpu_cfg, job, dev)
            gpu_times[job[:3]] = s
            gpu_metrics.append(m)
            log(f"{dev} {job[0]} {job[1]} c{job[2]}: {s:.2f} s")
            if args.metrics_out:  # after every job: a run cut short still leaves its students
                pd.concat(gpu_metrics, ignore_index=True).to_csv(args.metrics_out, index=False)
        gpu_stage = sum(gpu_times.values())
        peak_gpu_mb = (torch.cuda.max_memory_allocated() / 2**20) if dev == "cuda" else None

        # CPU: the same jobs, mixed order, until the budget is spent
        cpu_times, cpu_metrics = {}, []
        t_cpu = time.perf_counter()
        for job in mixed_order([j for j in jobs if j[:3] in gpu_times]):
            spent = time.perf_counter() - t_cpu
            over = spent >= args.cpu_budget or time.perf_counter() - t_start >= args.deadline
            if args.cpu_budget <= 0 or (cpu_times and over):
                break
            s, m = run_job(cfg, job, "cpu")
            cpu_times[job[:3]] = s
            cpu_metrics.append(m)
            log(f"cpu {job[0]} {job[1]} c{job[2]}: {s:.2f} s")

    both = list(cpu_times)
    cpu_s = sum(cpu_times.values())
    gpu_s = sum(gpu_times[k] for k in both)
    ratio = cpu_s / gpu_s if gpu_s > 0 else None  # None: no CPU jobs (--cpu-budget 0)
    all_cpu = len(both) == len(gpu_times)
    cpu_estimate = cpu_s if all_cpu else gpu_stage * ratio if ratio is not None else None
    eps = cfg["train"]["epsilon"]
    k_gpu = knees(pd.concat(gpu_metrics, ignore_index=True), eps)
    k_cpu = knees(pd.concat(cpu_metrics, ignore_index=True), eps) if cpu_metrics else pd.Series()
    common = k_cpu.index.intersection(k_gpu.index)
    agree = int(
        sum((k_gpu[t] == k_cpu[t]) or (np.isnan(k_gpu[t]) and np.isnan(k_cpu[t])) for t in common)
    )
    print(
        json.dumps(
            {
                "config": args.config,
                "device": torch.cuda.get_device_name(0)
                if dev == "cuda"
                else f"cpu ({platform.processor() or platform.machine()})",
                "training_jobs": len(jobs),
                "gpu_jobs_done": len(gpu_times),
                "gpu_chunk": args.gpu_chunk,
                "students": int(sum(len(m) for m in gpu_metrics)),
                "gpu_stage_seconds": round(gpu_stage, 2),
                "gpu_warmup_seconds": round(warm_s, 2),
                "cpu_threads": threads,
                "jobs_on_both": len(both),
                "cpu_seconds": round(cpu_s, 2),
                "gpu_seconds": round(gpu_s, 2),
                "cpu_over_gpu": None if ratio is None else round(ratio, 2),
                "cpu_stage_seconds_estimate": None
                if cpu_estimate is None
                else round(cpu_estimate, 1),
                "cpu_stage_measured": all_cpu,
                "knee_agreement": f"{agree}/{len(common)}",
                "peak_gpu_memory_mb": round(peak_gpu_mb, 1) if peak_gpu_mb is not None else None,
                "task_files_seconds": round(tasks_s, 2),
                "total_seconds": round(time.perf_counter() - t_start, 1),
                "torch": torch.__version__,
            }
        )
    )


if __name__ == "__main__":
    main()
