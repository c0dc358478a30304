"""The heads study (docs/method.md §9) without Snakemake, for the GPU check: train, measure,
report into OUTDIR, then one JSON line (device, sizes, times, validation loss, knees).

    python benchmarks/heads_check.py --config config/heads_gpu.yaml --out OUTDIR

benchmarks/device_check.sh runs it when HEADS_CONFIG is set. A dry run on a CPU in seconds:
``--config config/heads_tiny.yaml``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

from entropic_bound.config.heads import load_heads_config
from entropic_bound.core.io import write_table, write_text
from entropic_bound.heads.measure import measure_heads
from entropic_bound.heads.report import agreement, summary_markdown
from entropic_bound.heads.stage import train_heads


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", required=True, help="a heads config (config/heads_gpu.yaml)")
    ap.add_argument("--out", required=True, help="directory of the outputs")
    args = ap.parse_args(argv)
    cfg = load_heads_config(args.config)
    out = Path(args.out)

    def say(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    start = time.perf_counter()
    facts = train_heads(cfg, out / "model.pt", out / "training_curve.csv", log=say)
    measured = time.perf_counter()
    table = measure_heads(cfg, out / "model.pt", out / "heads.csv", out / "knee_curves.csv", say)
    agree = agreement(table, cfg["measure"]["taus"])
    write_table(agree, out / "estimators.csv")
    write_text(out / "heads.md", summary_markdown(table, agree, facts))
    line = {
        "device": facts["device"],
        "shape": facts["shape"],
        "parameters": facts["parameters"],
        "train_s": round(facts["train_wall_s"], 1),
        "measure_s": round(time.perf_counter() - measured, 1),
        "total_s": round(time.perf_counter() - start, 1),
        "valid_loss": round(facts["valid_loss"], 4),
        "knees": [None if math.isnan(k) else k for k in table["knee"]],  # NaN: no gap
    }
    print(json.dumps(line))
    return 0


if __name__ == "__main__":
    sys.exit(main())
