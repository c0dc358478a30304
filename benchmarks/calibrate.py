"""Optimiser calibration on one task: how far each rank's students get, how many steps, how fast.

    python benchmarks/calibrate.py --config config/large.yaml --rung L1 --r-star 32 \
        --ranks 16,31,32,64 --set batch=64 --set patience=2

Trains the students of the given ranks and seeds on the first task of the rung with that r*
(made in memory, as `rule tasks` makes it) with the config's optimiser for the class, changed
by every --set key=value (any field of engine.Optim: lr, batch, max_steps, patience, min_delta,
chunk, restarts, ...), and prints one JSON line: the seconds of training (initialisation, the
steps, the final evaluation and any restarts, train/restarts.py), the threads, and per student
its rank, seed, test R, steps, whether it converged and which initialisation was kept. How the shipped large configs were calibrated: README, "The large configs".
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time

import torch

from entropic_bound.config.load import class_optim, load_run_config
from entropic_bound.core.rungs import parse_rung
from entropic_bound.tasks.grid import specs_of_rung
from entropic_bound.tasks.make import make_task
from entropic_bound.train.engine import Optim
from entropic_bound.train.restarts import train_restarting


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="config/large.yaml")
    ap.add_argument("--rung", default="L4")
    ap.add_argument("--r-star", type=int, required=True)
    ap.add_argument("--ranks", required=True, help="comma-separated ranks")
    ap.add_argument("--seeds", default="0", help="comma-separated student seeds")
    ap.add_argument("--backend", default=None, help="auto | fused | torch (default: the config's)")
    ap.add_argument("--threads", type=int, default=None, help="default: the config's")
    ap.add_argument("--task-seed", type=int, default=None, help="default: the config's first")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    args = ap.parse_args(argv)
    cfg = load_run_config(args.config)
    torch.set_num_threads(args.threads or cfg["threads"])
    specs = [s for s in specs_of_rung(cfg, args.rung) if s.r_star == args.r_star]
    if args.task_seed is not None:
        specs = [s for s in specs if s.seed == args.task_seed]
    if not specs:
        raise SystemExit(f"calibrate: no {args.rung} task with r* = {args.r_star} in {args.config}")
    arrays = make_task(specs[0])
    meta = json.loads(str(arrays.pop("meta")))
    optim = Optim.from_config(class_optim(cfg, parse_rung(args.rung)[0]))
    fields = {f.name: f.type for f in dataclasses.fields(Optim)}
    changes = {}
    for item in args.set:
        key, _, value = item.partition("=")
        if key not in fields:
            raise SystemExit(f"calibrate: --set {key}: not a field of Optim ({', '.join(fields)})")
        changes[key] = int(value) if fields[key] in (int, "int") else float(value)
    optim = dataclasses.replace(optim, **changes)
    t = cfg["train"]
    start = time.perf_counter()
    out = train_restarting(
        [(arrays, meta)],
        args.rung,
        [int(r) for r in args.ranks.split(",")],
        [int(s) for s in args.seeds.split(",")],
        optim,
        init_scale=t["init_scale"],
        epsilon=t["epsilon"],
        base_seed=cfg["seed"],
        device=cfg["device"],
        backend=args.backend or t.get("backend", "auto"),
    )
    seconds = time.perf_counter() - start
    m = out["metrics"]
    print(
        json.dumps(
            {
                "task": meta["task_id"],
                "optim": dataclasses.asdict(optim),
                "backend": str(m.backend.iloc[0]),
                "threads": torch.get_num_threads(),
                "seconds": round(seconds, 2),
                "students": [
                    {
                        "rank": int(r.rank),
                        "seed": int(r.seed),
                        "R": float(f"{r.R:.4g}"),
                        "steps": int(r.steps),
                        "converged": bool(r.converged),
                        "restart": int(getattr(r, "restart", 0)),
                    }
                    for r in m.itertuples()
                ],
            }
        )
    )


if __name__ == "__main__":
    main()
