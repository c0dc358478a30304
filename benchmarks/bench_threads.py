"""1 against 2 threads per training job, with and without OMP_WAIT_POLICY=PASSIVE, on an idle
machine and beside a busy loop: one JSON object of engine seconds.

    nice -n 19 python benchmarks/bench_threads.py [--rounds 2] [--max-tasks 2] [--out FILE.json]

libgomp reads the policy once, when torch loads it, so each policy gets its own worker process
(torch imported once there); within it the engine trains the paper-scale L4 workload (the fused
kernel, built before any timing) at 1 and at 2 threads, without and with a busy loop beside it
(a Python ``while True`` at this process's nice level: with 2 cores, a 2-thread job then shares a
core with it), the settings interleaved round by round so that the machine's drift reaches all
alike. The 1-minute load average is recorded with each measurement: on a shared machine "idle"
means "without our busy loop". Compare ratios within one run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

POLICIES = ("default", "PASSIVE")
REPO = Path(__file__).resolve().parents[1]


def worker(args) -> dict:
    """In a process whose OMP_WAIT_POLICY is set: {setting: [seconds, ...]}."""
    import torch

    from entropic_bound.config.load import class_optim, load_run_config
    from entropic_bound.core.rungs import kernel_dim
    from entropic_bound.tasks.grid import specs_of_rung
    from entropic_bound.tasks.make import make_task
    from entropic_bound.train import fused
    from entropic_bound.train.engine import Optim, train_students

    cfg = load_run_config(REPO / "config" / "config.yaml")
    t, n, d = cfg["train"], cfg["task"]["n"], cfg["task"]["d"]
    tasks = []
    for spec in specs_of_rung(cfg, "L4")[: args.max_tasks]:
        a = make_task(spec)
        tasks.append((a, json.loads(str(a["meta"]))))
    optim = Optim.from_config(class_optim(cfg, "L4"))
    ranks = list(range(1, kernel_dim("L4", n, d) + 1))
    fused.available()  # build (or load) the kernel before any timing

    def engine(threads: int) -> float:
        torch.set_num_threads(threads)
        t0 = time.perf_counter()
        train_students(
            tasks,
            "L4",
            ranks,
            t["student_seeds"],
            optim,
            init_scale=t["init_scale"],
            epsilon=t["epsilon"],
            checkpoints=t["checkpoints"],
            base_seed=cfg["seed"],
            device="cpu",
            backend="fused",
        )
        return time.perf_counter() - t0

    out: dict[str, list] = {}
    for _ in range(args.rounds):
        for load in ("idle", "loaded"):
            busy = None
            if load == "loaded":
                busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
                time.sleep(0.5)
            try:
                for threads in (1, 2):
                    secs = engine(threads)
                    out.setdefault(f"{load} {threads}t", []).append(
                        {"seconds": round(secs, 2), "load_1min": round(os.getloadavg()[0], 1)}
                    )
            finally:
                if busy is not None:
                    busy.kill()
                    busy.wait()
    return {"cpu": fused.cpu_summary(), "students": len(tasks) * len(ranks) * 2, "runs": out}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--max-tasks", type=int, default=2, help="the L4 rung's first N tasks")
    ap.add_argument("--out", default=None, help="also write the JSON here")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args)))
        return
    runs, info = {}, {}
    for policy in POLICIES:
        env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
        if policy != "default":
            env["OMP_WAIT_POLICY"] = policy
        cmd = [
            sys.executable,
            __file__,
            "--worker",
            "--rounds",
            str(args.rounds),
            "--max-tasks",
            str(args.max_tasks),
        ]
        res = json.loads(
            subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
            .stdout.strip()
            .splitlines()[-1]
        )
        info = {"cpu": res["cpu"], "students": res["students"]}
        runs |= {f"{k} {policy}": v for k, v in res["runs"].items()}
    med = {k: statistics.median(r["seconds"] for r in v) for k, v in runs.items()}
    result = {
        "benchmark": "benchmarks/bench_threads.py",
        "command": "nice -n 19 python benchmarks/bench_threads.py "
        + " ".join(argv if argv is not None else sys.argv[1:]),
        "date": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "workload": f"L4 d=16 n=16, first {args.max_tasks} tasks, ranks 1..16 x 2 seeds = "
        f"{info['students']} students, fused kernel",
        "cpu": info["cpu"],
        "median_engine_seconds": {k: round(v, 2) for k, v in med.items()},
        "ratio_2_to_1_threads": {
            f"{load} {policy}": round(med[f"{load} 2t {policy}"] / med[f"{load} 1t {policy}"], 2)
            for load in ("idle", "loaded")
            for policy in POLICIES
        },
        "runs": runs,
    }
    text = json.dumps(result, indent=1)
    if args.out:
        Path(args.out).write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
