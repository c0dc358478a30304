"""Measure the cross-vendor tolerances of `entropic-bound verify` from two paper runs on CPUs of
different vendors (docs/reproducibility.md, "Tolerances measured on both vendors").

    python benchmarks/measure_cross_vendor.py results/paper benchmarks/reference/intel \
        [--out benchmarks/results/tolerances_2026-12-07.json]

For every float column of every table both hold, the largest relative deviation over the values
at least 1e-3 of the column's largest |value| and the largest absolute one below; ``r_hat`` per
predictor (P_attn's float32 path, P_static's and P_invert's float64 paths). For the data-only
spectra (the first run's ``predict/spectra.parquet``): the least uniform perturbation δ of s/s_1
that explains each deviation of the stable, entropy and participation ranks (|Δr̂| / ‖∇r̂‖₁),
its largest per predictor: the measured spread of the normalised spectrum; and the margin of
every rank that differs. Rows whose ranks differ are decisions, not float deviations, and are
left out of the float columns' numbers.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from entropic_bound.core.estimators import estimate
from entropic_bound.train.fused import cpu_summary
from entropic_bound.verify.compare import run_tables
from entropic_bound.verify.decisions import is_spectral, spectral_margin
from entropic_bound.verify.rules import read_spectra

CONTINUOUS = ("stable", "entropy", "participation")


def deviations(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    ok = np.isfinite(a) & np.isfinite(b)
    a, b = a[ok], b[ok]
    if not len(a):
        return 0.0, 0.0
    big = np.abs(a) >= 1e-3 * np.max(np.abs(a)) if np.max(np.abs(a)) > 0 else np.zeros(len(a), bool)
    d = np.abs(a - b)
    rel = float(np.max(d[big] / np.abs(a[big]))) if big.any() else 0.0
    ab = float(np.max(d[~big])) if (~big).any() else 0.0
    return rel, ab


def spectral_spread(spectra: dict, ref: pd.DataFrame, run: pd.DataFrame) -> dict:
    out: dict = {}
    for i in np.flatnonzero(ref["estimator"].isin(CONTINUOUS).to_numpy()):
        r = ref.iloc[i]
        s = spectra.get((r["task_id"], float(r["sigma"]), r["predictor"]))
        if s is None:
            continue
        q = np.sort(s)[::-1] / np.max(s)
        f = lambda x, est=r["estimator"]: float(estimate(x[None], est)[0])  # noqa: E731
        h, f0 = 1e-8, f(q)
        grad = np.array([(f(q + h * e) - f0) / h for e in np.eye(len(q))])
        delta = abs(float(run.iloc[i]["r_hat"]) - float(r["r_hat"])) / max(
            np.abs(grad).sum(), 1e-300
        )
        cur = out.setdefault(r["predictor"], {"delta": 0.0, "row": None})
        if delta > cur["delta"]:
            cur.update(delta=delta, row=f"{r['task_id']} σ={r['sigma']:g} {r['estimator']}")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", type=Path)
    ap.add_argument("other", type=Path)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    a, b = run_tables(args.run), run_tables(args.other)
    result: dict = {
        "run": str(args.run),
        "other": str(args.other),
        "cpu_of_run": cpu_summary(),
        "tables": {},
    }
    for name in sorted(set(a) & set(b)):
        if not name.endswith(".csv"):
            continue
        x, y = pd.read_csv(a[name]), pd.read_csv(b[name])
        if len(x) != len(y):
            continue
        decided = np.zeros(len(x), dtype=bool)
        if {"estimator", "r_hat"} <= set(x.columns):
            spectral = x["estimator"].map(is_spectral).to_numpy()
            decided = spectral & (x["r_hat"].to_numpy() != y["r_hat"].to_numpy())
        cols = {}
        for c in x.columns:
            if not pd.api.types.is_float_dtype(x[c]):
                continue
            groups = [("", np.ones(len(x), bool))]
            if c == "r_hat" and "predictor" in x.columns:
                groups = [
                    (f"[predictor={p}]", (x["predictor"] == p).to_numpy())
                    for p in x["predictor"].unique()
                ]
            for suffix, rows in groups:
                keep = rows & ~decided
                rel, ab = deviations(x[c].to_numpy(float)[keep], y[c].to_numpy(float)[keep])
                cols[c + suffix] = {"rel": rel, "abs": ab}
        result["tables"][name] = {"columns": cols, "rank_flips": int(decided.sum())}
    spectra = read_spectra(args.run)
    if spectra is not None and "data_only_predictions.csv" in result["tables"]:
        x, y = (
            pd.read_csv(a["data_only_predictions.csv"]),
            pd.read_csv(b["data_only_predictions.csv"]),
        )
        result["spectral_spread"] = spectral_spread(spectra, y, x)
        flips = []
        for i in np.flatnonzero(
            (x["r_hat"] != y["r_hat"]).to_numpy() & x["estimator"].map(is_spectral).to_numpy()
        ):
            r = x.iloc[i]
            s = spectra[(r["task_id"], float(r["sigma"]), r["predictor"])]
            flips.append(
                {
                    "row": int(i),
                    "task_id": r["task_id"],
                    "sigma": float(r["sigma"]),
                    "predictor": r["predictor"],
                    "estimator": r["estimator"],
                    "run": float(r["r_hat"]),
                    "other": float(y.iloc[i]["r_hat"]),
                    "margin_run": spectral_margin(s, r["estimator"]),
                }
            )
        result["rank_flips"] = flips
    text = json.dumps(result, indent=2, sort_keys=True)
    if args.out:
        args.out.write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
