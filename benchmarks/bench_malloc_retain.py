"""Kernel (system) time of one task's work at each ``malloc_retain_mb``, interleaved.

    OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 python benchmarks/bench_malloc_retain.py \\
        --configfile config/large_one_seed.yaml [--rung L1 --r-star 32] [--values 0 256] \\
        [--repeats 3] [--work tasks|predict] [--out F.csv]

Each measurement is a fresh process that sets the allocator as a workflow job does
(``core.runner.retain_freed_memory``, before torch loads), then does one task's work: ``tasks``, the
arrays of its file (``tasks.files.task_file_arrays``: at d = 64 the task's data are made in
chunks, digested and dropped), or ``predict``, its data-only spectra as a `predict_part` job
computes them (``predict.stage.data_only_spectra``: the data made again from the task file's
seeds, P_static's factorisation of X, both predictors at each σ), and reports, for that work only, ``getrusage``'s user and system seconds, minor page
faults, wall seconds, the process's peak RSS, and the sha256 of every array it made. The values
run in turn (0, 256, 0, 256, ...), ``repeats`` times each; the medians per value are printed,
every row is written to ``--out``, and the digests must agree across values (exit status 1 if
not).
"""

from __future__ import annotations

import argparse
import csv
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

WORKER = r"""
import hashlib, json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from entropic_bound.core.runner import retain_freed_memory
retain_freed_memory(int(sys.argv[3]))
import numpy as np
import torch
torch.set_num_threads(1)
from entropic_bound.config.load import load_config
from entropic_bound.tasks.files import task_file_arrays
from entropic_bound.tasks.grid import specs_of_rung
cfg = load_config(sys.argv[2])
spec = next(s for s in specs_of_rung(cfg, sys.argv[4]) if s.r_star == int(sys.argv[5]))
work, task_file = sys.argv[6], sys.argv[7]
if work == "predict":
    from entropic_bound.predict.stage import data_only_spectra
r0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
if work == "tasks":
    arrays = task_file_arrays(spec, cfg["task"].get("store_data", "auto"))
else:
    table = data_only_spectra(cfg, [task_file])
    arrays = {"spectra": np.concatenate(list(table["spectrum"])), "table": np.frombuffer(
        table.drop(columns="spectrum").to_csv(index=False).encode(), dtype=np.uint8)}
wall, r1 = time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_SELF)
digest = hashlib.sha256()
for key in sorted(arrays):
    digest.update(key.encode() + arrays[key].tobytes())
print(json.dumps({
    "user_s": r1.ru_utime - r0.ru_utime, "sys_s": r1.ru_stime - r0.ru_stime, "wall_s": wall,
    "minor_faults": r1.ru_minflt - r0.ru_minflt, "peak_rss_mb": r1.ru_maxrss / 1024,
    "sha256": digest.hexdigest(),
}))
"""


def cpu_model() -> str:
    """/proc/cpuinfo's model name, and its widest vector extension (AVX-512, AVX2)."""
    try:
        info = Path("/proc/cpuinfo").read_text()
    except OSError:
        return platform.processor() or "unknown"
    name = next((ln.split(":", 1)[1].strip() for ln in info.splitlines() if "model name" in ln), "")
    flags = next((ln.split(":", 1)[1].split() for ln in info.splitlines() if "flags" in ln), [])
    isa = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "no AVX2"
    return f"{name or 'unknown'} ({isa})"


def write_task_file(configfile: str, rung: str, r_star: int) -> str:
    """The task's file under the system's temporary folder (kept: made once per machine)."""
    sys.path.insert(0, str(REPO / "src"))
    from entropic_bound.config.load import load_config
    from entropic_bound.core.io import write_npz
    from entropic_bound.tasks.files import task_file_arrays
    from entropic_bound.tasks.grid import specs_of_rung

    cfg = load_config(configfile)
    spec = next(s for s in specs_of_rung(cfg, rung) if s.r_star == r_star)
    path = Path(tempfile.gettempdir()) / "bench_malloc_retain" / cfg["run_name"]
    path = path / f"{spec.task_id}.npz"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        write_npz(path, **task_file_arrays(spec, cfg["task"].get("store_data", "auto")))
    return str(path)


def measure(configfile: str, mb: int, rung: str, r_star: int, work: str, task_file: str) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    cmd = [sys.executable, "-c", WORKER, str(REPO / "src"), configfile, str(mb), rung, str(r_star)]
    cmd += [work, task_file]
    out = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--configfile", default="config/large_one_seed.yaml")
    ap.add_argument("--rung", default="L1")
    ap.add_argument("--r-star", type=int, default=32)
    ap.add_argument("--values", type=int, nargs="+", default=[0, 256])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--work", choices=["tasks", "predict"], default="tasks")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    name = Path(args.configfile).stem
    out = args.out or REPO / "benchmarks" / "results" / (
        f"bench_malloc_retain_{name}_{args.work}_{datetime.date.today()}.csv"
    )
    task_file = ""
    if args.work == "predict":  # the task's file, made once (as the tasks job writes it)
        task_file = write_task_file(args.configfile, args.rung, args.r_star)
    rows = []
    for repeat in range(args.repeats):
        for mb in args.values:
            row = {"config": name, "rung": args.rung, "r_star": args.r_star, "malloc_retain_mb": mb}
            row |= {"work": args.work, "repeat": repeat}
            row |= measure(args.configfile, mb, args.rung, args.r_star, args.work, task_file)
            row |= {"threads": 1, "load_1min": round(os.getloadavg()[0], 2), "cpu": cpu_model()}
            rows.append(row)
            print(json.dumps(row), flush=True)
    for mb in args.values:
        mine = [r for r in rows if r["malloc_retain_mb"] == mb]
        summary = {
            k: round(statistics.median(r[k] for r in mine), 2)
            for k in ("sys_s", "user_s", "wall_s", "minor_faults", "peak_rss_mb")
        }
        print(json.dumps({"malloc_retain_mb": mb, "median": summary}))
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {out}")
    return 0 if len({r["sha256"] for r in rows}) == 1 else 1


if __name__ == "__main__":
    sys.exit(main())
