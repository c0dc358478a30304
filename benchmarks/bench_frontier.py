"""Frontier-grid benchmark: wall time of the paper-scale grid (no training), median of 3.

Prints one JSON line. The issue's target is < 60 s on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import time

import torch

from entropic_bound.config import load_config
from entropic_bound.frontier import frontier_grid


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="config/config.yaml")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args(argv)
    cfg = load_config(args.config)
    torch.set_num_threads(args.threads)
    p = cfg["predict"]
    times = []
    for _ in range(args.repeats):
        t = time.perf_counter()
        df = frontier_grid(
            cfg["frontier"], cfg["seed"], taus=p["taus"], tol=p["tol"], clip=p["clip"]
        )
        times.append(time.perf_counter() - t)
    print(
        json.dumps(
            {
                "frontier_seconds_median": round(statistics.median(times), 2),
                "frontier_seconds": [round(x, 2) for x in times],
                "rows": len(df),
                "threads": args.threads,
                "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            }
        )
    )


if __name__ == "__main__":
    main()
