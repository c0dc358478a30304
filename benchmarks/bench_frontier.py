"""Frontier-grid benchmark: wall time of the paper-scale grid (no training), median of 3.

Prints one JSON line. The target is < 60 s on 2 cores (docs/performance.md, Targets). ``--config`` takes any run
config (an overlay such as config/scale/d32.yaml too); ``--n`` and ``--seeds`` keep part of its
grid (e.g. ``--config config/large.yaml --n 64 --seeds 0``: one d = 64 block in ~40 s).
``--p-attn-sigma formed,linear`` times both routes of P_attn's noisy copies in each repeat,
alternating, and adds their medians and the median ratio (frontier.p_attn_sigma).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import time

import torch

from entropic_bound.config.load import load_run_config
from entropic_bound.frontier.grid import frontier_grid


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="config/config.yaml")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--n", type=int, nargs="+", help="only these n of the config's frontier grid")
    ap.add_argument("--seeds", type=int, nargs="+", help="only these seeds of the grid")
    ap.add_argument("--p-attn-sigma", help="formed | linear, or formed,linear to compare")
    args = ap.parse_args(argv)
    cfg = load_run_config(args.config)
    fcfg = dict(cfg["frontier"])
    for key in ("n", "seeds"):
        keep = getattr(args, key)
        if keep is not None:
            missing = sorted(set(keep) - set(fcfg[key]))
            if missing:
                ap.error(f"--{key} {missing} not in the config's frontier.{key} {fcfg[key]}")
            fcfg[key] = [v for v in fcfg[key] if v in keep]
    torch.set_num_threads(args.threads)
    p = cfg["predict"]
    routes = (args.p_attn_sigma or fcfg.get("p_attn_sigma", "formed")).split(",")
    by_route: dict[str, list[float]] = {r: [] for r in routes}
    for _ in range(args.repeats):
        for route in reversed(routes):  # the first route last: its df is the one reported
            t = time.perf_counter()
            df = frontier_grid(
                {**fcfg, "p_attn_sigma": route},
                cfg["seed"],
                taus=p["taus"],
                tol=p["tol"],
                clip=p["clip"],
            )
            by_route[route].append(time.perf_counter() - t)
    times = by_route[routes[0]]
    compared = {}
    if len(routes) > 1:
        compared = {
            "route_seconds_median": {
                r: round(statistics.median(v), 2) for r, v in by_route.items()
            },
            "route_speedup_median": {
                r: round(statistics.median([a / b for a, b in zip(times, v)]), 3)
                for r, v in by_route.items()
            },
        }
    print(
        json.dumps(
            {
                "p_attn_sigma": routes[0],
                "frontier_seconds_median": round(statistics.median(times), 2),
                "frontier_seconds": [round(x, 2) for x in times],
                **compared,
                "rows": len(df),
                "n": fcfg["n"],
                "seeds": fcfg["seeds"],
                "threads": args.threads,
                "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            }
        )
    )


if __name__ == "__main__":
    main()
