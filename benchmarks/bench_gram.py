"""P_attn's Gram matrix C = Σ_b Z_b Z_bᵀ: the einsum it was against the blocked products it is
(predict/attention.py, ``attention_native_gram``), interleaved, one thread.

    OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 python benchmarks/bench_gram.py [--repeats 5] [--out F.csv]

For each shape (B = 16 384 sequences, the large run's stream, at d = 64, 32 and 16) the two
routes run alternately, ``einsum`` first, ``repeats`` times each, on the same float64 Z (the
C library's default allocator, as `malloc_retain_mb: 0` leaves it); every result is compared
bitwise with the einsum's. One CSV row per shape: the median seconds of each, their ratio, the
GFLOP/s (2·B·d²·d_v flops) and the CPU, written to ``--out`` and printed.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import os
import statistics
import sys
import time
from pathlib import Path

import torch
from bench_malloc_retain import cpu_model  # one definition of the CPU line (torch-free)

from entropic_bound.predict.attention import attention_native_gram

REPO = Path(__file__).resolve().parents[1]
SHAPES = [(16384, 64), (16384, 32), (16384, 16)]


def einsum_gram(Z1: torch.Tensor, Z2: torch.Tensor) -> torch.Tensor:
    return torch.einsum("gbij,gbkj->gik", Z1, Z2)


def timed(fn, Z) -> tuple[float, torch.Tensor]:
    start = time.perf_counter()
    out = fn(Z, Z)
    return time.perf_counter() - start, out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument(
        "--out",
        default=str(REPO / "benchmarks" / "results" / f"bench_gram_{datetime.date.today()}.csv"),
    )
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    rows = []
    for B, d in SHAPES:
        Z = torch.randn(1, B, d, d, generator=torch.Generator().manual_seed(d), dtype=torch.float64)
        want = einsum_gram(Z, Z)
        times = {"einsum": [], "blocked": []}
        equal = True
        for _ in range(args.repeats):
            for name, fn in (("einsum", einsum_gram), ("blocked", attention_native_gram)):
                seconds, out = timed(fn, Z)
                times[name].append(seconds)
                equal &= torch.equal(out, want)
        old, new = statistics.median(times["einsum"]), statistics.median(times["blocked"])
        flops = 2 * B * d**3
        rows.append(
            {
                "B": B,
                "d": d,
                "repeats": args.repeats,
                "einsum_s": round(old, 4),
                "blocked_s": round(new, 4),
                "ratio": round(old / new, 2),
                "einsum_gflops": round(flops / old / 1e9, 2),
                "blocked_gflops": round(flops / new / 1e9, 2),
                "bitwise_equal": equal,
                "threads": torch.get_num_threads(),
                "load_1min": round(os.getloadavg()[0], 2),
                "cpu": cpu_model(),
                "torch": torch.__version__,
            }
        )
        print(rows[-1], flush=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {args.out}")
    return 0 if all(r["bitwise_equal"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
