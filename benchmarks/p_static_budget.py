"""P_static on noisy copies against the data budget (exploratory: not pre-registered, no verdict).

    python benchmarks/p_static_budget.py --config config/large.yaml --r-star 2,16 --budget 1,4

Claim C4's second half asks P_static to recover r* on noisy copies (σ = 0.05) of the L0 tasks.
Its least squares regresses vec(Y) on vec(X) with n·d unknowns per output, so its noise
tolerance depends on how many sequences B there are per unknown. This script makes the L0 task
of each r* as the pipeline does (the config's seed, n, d, ...) but with B = budget · n·d training
sequences, adds the pipeline's noise draw for each σ (noisy_copy_rng, as `predict` does), and
prints one JSON line per (r*, budget, σ): B, P_static's rank (the claims estimator, rounded) and
its static-fit share. At the large config's own budget (1) it repeats what its `predict` found.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time

import numpy as np
import torch

from entropic_bound.config.load import load_config
from entropic_bound.core.estimators import estimate, round_rank
from entropic_bound.core.seeds import noisy_copy_rng
from entropic_bound.predict.static import StaticLeastSquares, predict_static
from entropic_bound.tasks.grid import specs_of_rung
from entropic_bound.tasks.make import make_task


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="config/large.yaml")
    ap.add_argument("--r-star", default="2,16", help="comma-separated r* of the config's L0 tasks")
    ap.add_argument("--budget", default="1,4", help="comma-separated B / (n·d)")
    ap.add_argument("--sigma", default="0,0.05", help="comma-separated noise levels")
    ap.add_argument("--threads", type=int, default=None, help="default: the config's")
    args = ap.parse_args(argv)
    cfg = load_config(args.config)
    torch.set_num_threads(args.threads or cfg["threads"])
    name = load_config("config/claims.yaml", schema="claims")["estimator"]
    tol = cfg["predict"]["tol"]
    for r_star in (int(r) for r in args.r_star.split(",")):
        spec = next(s for s in specs_of_rung(cfg, "L0") if s.r_star == r_star)
        for budget in (int(b) for b in args.budget.split(",")):
            start = time.perf_counter()
            B = budget * spec.n * spec.d
            task = make_task(dataclasses.replace(spec, n_train=B, n_test=8))
            X, Y = task["X_train"].astype(np.float64), task["Y_train"].astype(np.float64)
            lstsq = StaticLeastSquares(X)
            noise = noisy_copy_rng(cfg["seed"], spec.r_star, spec.seed).standard_normal(Y.shape)
            for sigma in (float(s) for s in args.sigma.split(",")):
                st = predict_static(X, Y, lstsq=lstsq, noise=noise if sigma else None, scale=sigma)
                r_hat = round_rank(estimate(st["spectrum"], name, tol=tol))
                print(
                    json.dumps(
                        {
                            "task": spec.task_id,
                            "r_star": r_star,
                            "budget": budget,
                            "B": B,
                            "sigma": sigma,
                            "estimator": name,
                            "P_static": int(r_hat),
                            "static_fit_share": float(f"{float(st['static_fit_share']):.4g}"),
                            "seconds": round(time.perf_counter() - start, 1),
                        }
                    ),
                    flush=True,
                )


if __name__ == "__main__":
    main()
