"""The planted world's two tables that only registration v4 reads (docs/method.md §5d,
"Controls"): C8's distorted learned kernels and X1's per-teacher noise tolerances.

In the true world softmax distorts the learned L4 kernels by a floor of small components
(5·10⁻³ of s₁ each, far below 1 % of the energy, above the numerical rank's 10⁻³), so the
numerical rank drops from exact on L3 to never exact on L4 (the power condition holds), while
r_E(0.99) stays exact; P_invert tolerates a tenth of its linear twin's noise. Each switch makes
one statement false in the way its check exists to catch.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: planted-false inputs of v4's own tables: switch -> what it plants
SWITCHES_V4 = {
    "C8_v4_tail": "learned L4 tails hold > 1 % of the energy (r_E(0.99) over-counts)",
    "C8_v4_fragile": "L4's last component shrunk below 1 % of the energy on a sixth of the kernels "
    "(r_E(0.99) one too low there, the numerical rank exact)",
    "C8_v4_no_distortion": "no distortion: every estimator as exact on L4 as on L3 (no power)",
    "C8_v4_unmatched": "half the L4 kernels without their teacher's L3 kernel",
    "C9_v4_nonlinear": "P_invert as noise tolerant as its linear twin, per teacher",
    "C9_v4_identifiable": "V = I data: P_invert assuming V = I exact everywhere",
}


def planted_distortion(r_stars, seeds, d: int, broken=(), betas=(1.0, 2.0, 4.0)) -> pd.DataFrame:
    """C8_distortion.parquet of the planted world: per L4 teacher and student seed (0, 1) one
    L3 kernel and one L4 kernel per β, spectra of length d."""
    broken = set(broken)
    rows = []
    for r_star in r_stars:
        for ts in seeds:
            teacher = f"L4_r{r_star}_s{ts}"
            signal = np.linspace(1.0, 0.5, r_star)
            for seed in (0, 1):
                for rung, beta in [("L3", np.nan)] + [("L4", b) for b in betas]:
                    spec = _kernel(signal, d, rung, ts, broken)
                    if rung == "L3" and "C8_v4_unmatched" in broken and seed == 1:
                        continue
                    rows.append(
                        {"task_id": teacher if rung == "L4" else teacher.replace("L4", "L3")}
                        | {"rung": rung, "r_star": r_star, "task_seed": ts, "seed": seed}
                        | {"student_class": rung, "static_student": False, "rank": d}
                        | {"R": 1e-3, "R_theory": np.nan, "converged": True}
                        | {"spectrum": np.sort(spec)[::-1].copy(), "teacher": teacher}
                        | {"beta": beta, "sigma": 0.1, "sigma_rel": 0.1, "n_train": d * d}
                    )
    return pd.DataFrame(rows)


def _kernel(signal: np.ndarray, d: int, rung: str, ts: int, broken: set) -> np.ndarray:
    """One learned spectrum: the teacher's signal over a floor. L3's floor is 10⁻⁴ of s₁; L4's
    5·10⁻³ (softmax's distortion: the numerical rank counts it, r_E(0.99) does not)."""
    floor = 1e-4
    if rung == "L4" and not broken & {"C8_v4_no_distortion", "C8_v4_fragile"}:
        floor = 5e-3
    if rung == "L4" and "C8_v4_tail" in broken:
        floor = 0.2
    spec = np.concatenate([signal, np.full(d - len(signal), floor)])
    if rung == "L4" and "C8_v4_fragile" in broken and ts == 0 and len(signal) >= 2:
        spec[len(signal) - 1] = 0.05  # < 1 % of the energy: r_E(0.99) misses it, tol 10⁻³ not
    return spec


def planted_x1_teachers(r_stars, seeds, d: int, broken=()) -> pd.DataFrame:
    """X1_teachers.csv of the planted world: per value-known teacher, n ≤ d, β ∈ {0.25, 1, 2}:
    P_invert's σ_exact/std a tenth of its linear twin's (``C9_v4_nonlinear``: equal)."""
    broken = set(broken)
    rows = []
    for n in (d // 4, d // 2, d):
        for beta in (0.25, 1.0, 2.0):
            for r_star in r_stars:
                for seed in seeds:
                    inv = 0.1 if "C9_v4_nonlinear" in broken else 0.01
                    for pred, rel in (("P_invert", inv), ("P_invert_linear", 0.1)):
                        rows.append(
                            {"predictor": pred, "class": "L4", "value_map": "known"}
                            | {"r_star": r_star, "seed": seed, "n": n, "d": d, "beta": beta}
                            | {"n_seqs": 512, "clean_std": 1.0, "sigma_exact": rel}
                            | {"sigma_exact_rel": rel}
                        )
    return pd.DataFrame(rows)


def identifiable(x1: pd.DataFrame, broken=()) -> pd.DataFrame:
    """X1_boundaries with ``C9_v4_identifiable``: P_invert assuming V = I exact on every case
    (data whose value map is I: kernel and value can be told apart)."""
    if "C9_v4_identifiable" not in set(broken):
        return x1
    x1 = x1.copy()
    x1.loc[x1["predictor"] == "P_invert_V=I", "rate_clean"] = 1.0
    return x1
