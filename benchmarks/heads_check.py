"""The heads measurement (docs/method.md §9) without Snakemake, for the GPU check: train,
measure, read the knee's reliability and the estimators against the nulls into OUTDIR, then one
JSON line (device, sizes, times, validation loss, knees, and the full run's cost extrapolated).

    python benchmarks/heads_check.py --config config/heads_gpu.yaml --out OUTDIR \
        [--steps 300] [--measure-heads 2]

``--steps`` trains that many steps instead of the config's (a timing of the model's size),
``--measure-heads`` measures only the first K heads (in layer, head order): at the anchor's
head size (config/heads_gpu.yaml: 12 layers × 12 heads of d_head 64) the full measurement is
hours, so the device check times a few and extrapolates. benchmarks/device_check.sh runs it
wherever CUDA is present. A dry run on a CPU in seconds: ``--config config/heads_tiny.yaml``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

from entropic_bound.config.heads import load_heads_config
from entropic_bound.core.io import read_table, write_table, write_text
from entropic_bound.heads.measure import measure_heads
from entropic_bound.heads.reliability import reliability
from entropic_bound.heads.report import agreement, summary_markdown
from entropic_bound.heads.stage import train_heads


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", required=True, help="a heads config (config/heads_gpu.yaml)")
    ap.add_argument("--out", required=True, help="directory of the outputs")
    ap.add_argument("--steps", type=int, default=0, help="train this many steps (0: the config's)")
    ap.add_argument(
        "--measure-heads", type=int, default=0, help="measure the first K heads (0: all)"
    )
    args = ap.parse_args(argv)
    cfg = load_heads_config(args.config)
    full_steps = cfg["train"]["steps"]
    if args.steps:
        t = cfg["train"]
        t["steps"] = args.steps
        t["warmup"] = min(t["warmup"], args.steps // 2)
        t["eval_every"] = min(t["eval_every"], args.steps)
    out = Path(args.out)

    def say(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    start = time.perf_counter()
    facts = train_heads(cfg, out / "model.pt", out / "training_curve.csv", log=say)
    measured = time.perf_counter()
    shape = facts["shape"]
    pairs = [(la, h) for la in range(shape["layers"]) for h in range(shape["heads"])]
    only = pairs[: args.measure_heads] if args.measure_heads else None
    table = measure_heads(
        cfg, out / "model.pt", out / "heads.csv", out / "knee_curves.csv", say,
        windows_path=out / "knee_windows.parquet", only=only,
    )  # fmt: skip
    measure_s = time.perf_counter() - measured
    rel = reliability(read_table(out / "knee_windows.parquet"), cfg["measure"], cfg["seed"])
    table = table.merge(rel.drop(columns="knee"), on=["layer", "head"], how="left")
    agree = agreement(table, cfg["measure"]["taus"])
    write_table(rel, out / "knee_reliability.csv")
    write_table(agree, out / "estimators.csv")
    write_text(out / "heads.md", summary_markdown(table, agree, facts))
    per_step = facts["train_wall_s"] / max(1, facts["steps_run"])
    per_head = measure_s / len(table)
    line = {
        "device": facts["device"],
        "shape": shape,
        "parameters": facts["parameters"],
        "steps": facts["steps_run"],
        "train_s": round(facts["train_wall_s"], 1),
        "measure_s": round(measure_s, 1),
        "heads_measured": len(table),
        "total_s": round(time.perf_counter() - start, 1),
        "valid_loss": round(facts["valid_loss"], 4),
        "knees": [None if math.isnan(k) else k for k in table["knee"]],  # NaN: no gap
        "resolved": [bool(v) for v in table["knee_resolved"]],
        # the config's full run at these rates (steps at most the config's, every head)
        "full_run_h": round((per_step * full_steps + per_head * len(pairs)) / 3600, 2),
    }
    print(json.dumps(line))
    return 0


if __name__ == "__main__":
    sys.exit(main())
