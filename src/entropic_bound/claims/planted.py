"""Planted inputs: fabricated cached tables that follow the table contract exactly.

``fabricate()`` builds a world in which every claim C1–C9 reproduces; ``fabricate(broken=
{"C3"})`` breaks the named claims by changing exactly the numbers each claim tests, so that a
check can be shown failing where its claim is false (docs/method.md §5c, "Controls": the
tests and every run's controls table, :mod:`entropic_bound.claims.controls`, read these). The
switches named ``<claim>_<what>`` break one check of registration v3 each (listed in
``controls.py``). The switches ``C1_nan``,
``C5_absent``, ``C6_nan``, ``C8_list`` and ``C8_nan`` fabricate the logic gaps closed in 192a7a6 (2026-12-03)
(a NaN, an absent task, a competitor missing from the run config), each of which used to
pass. No training, no tasks: the
numbers follow the theory of docs/method.md (tail energies, teacher spectra) by construction.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from entropic_bound.core.rungs import ladder_lambda, parse_rung

ALL_RUNGS = ("L0", "L1", "L2", "L3", "L4", "Lam0.25", "Lam0.50", "Lam0.75")
ESTIMATORS = (
    "numerical",
    "stable",
    "entropy",
    "participation",
    "energy_0.9",
    "energy_0.95",
    "energy_0.99",
    "energy_0.999",
)
#: an offset per non-default estimator, so that only energy_0.99 is exact in the passing world
OFFSET = {
    "numerical": 0.0,
    "stable": -0.4,
    "entropy": 0.3,
    "participation": -0.3,
    "energy_0.9": -1.0,
    "energy_0.95": -0.6,
    "energy_0.99": 0.0,
    "energy_0.999": 0.0,  # registration v2's estimator (exact in the passing world)
    "floor": 0.0,  # the floor-aware rank: a competitor of v3's C8 on the frontier only
}
#: the frontier computes the opt-in floor-aware rank too (core/tables.FRONTIER_OPT_IN)
FRONTIER_ESTIMATORS = (*ESTIMATORS, "floor")


def teacher_spectrum(r_star: int, kappa: float = 2.0) -> np.ndarray:
    return np.linspace(1.0, 1.0 / kappa, r_star)


def tail_energy(s: np.ndarray, rank: int) -> float:
    e = np.asarray(s) ** 2
    return float(e[rank:].sum() / e.sum())


def _static_risk(rung: str, broken: set) -> float:
    """The smaller static-student R of a rung: ~0 on static rungs, rising along λ, large on L3/L4."""
    cls, lam = parse_rung(rung)
    if cls in ("L0", "L1", "L2"):
        return 1e-4
    if cls in ("L3", "L4"):
        low = "C5" in broken or "C5_static" in broken
        return 0.01 if low else (0.3 if cls == "L3" else 0.4)
    return (0.3 - 0.25 * lam) if ("C6" in broken or "C6_risk" in broken) else 0.02 + 0.3 * lam


def _static_share(rung: str, broken: set) -> float:
    cls, lam = parse_rung(rung)
    lam = ladder_lambda(rung)
    if cls in ("L0", "L1", "L2"):
        return 1.0
    if cls == "L3":
        return 0.9
    rising = "C6" in broken or "C6_share" in broken
    return 0.5 + 0.4 * lam if rising else 1.0 - 0.45 * lam


def _learned_spectrum(
    rung: str, r_star: int, k: int, broken: set, first: bool = False
) -> np.ndarray:
    """A full-rank student's learned spectrum: the teacher's plus a small remnant of the init.

    ``first``: the student of the first task and seed of its rung and r*; ``C8_list`` gives
    it alone (at r* = 1) a remnant just over 1% of the energy, so that r_E(0.99) is one too high
    on 1/12 L4 students while r_E(0.9) and r_E(0.95), absent from a run config with taus
    [0.99], are exact on all 12;
    ``C8_nan`` gives it a NaN spectrum (a diverged student).
    """
    cls = parse_rung(rung)[0]
    bad = (
        (cls == "L0" and "C3" in broken)
        or (cls == "L4" and "C8" in broken)
        or f"C7_recovery@{cls}" in broken
    )
    tail = 0.15 if bad else 1e-4
    if cls == "L4" and "C8_list" in broken and first and r_star == 1:
        tail = 0.051  # tail energy just over 1%: r_E(0.99) = 2, r_E(0.9) = r_E(0.95) = 1
    spec = np.concatenate([teacher_spectrum(r_star) * 1.3, np.full(k - r_star, tail)])
    if cls == "L4" and "C8_nan" in broken and first:
        spec[0] = np.nan
    return spec


def fabricate_metrics(
    rungs=ALL_RUNGS,
    r_stars=(1, 2, 4),
    task_seeds=(0, 1),
    student_seeds=(0, 1),
    n: int = 8,
    d: int = 8,
    broken=(),
) -> pd.DataFrame:
    """train_metrics: the own-class rank sweep and the two full-rank static students per task."""
    broken = set(broken)
    eps = 1e-3
    rows = []
    for rung in rungs:
        cls = parse_rung(rung)[0]
        k = n if cls in ("L0", "L1") else d
        for r_star in r_stars:
            s = teacher_spectrum(r_star)
            for ts in task_seeds:
                task = {
                    "task_id": f"{rung}_r{r_star}_s{ts}",
                    "rung": rung,
                    "r_star": r_star,
                    "task_seed": ts,
                }
                for seed in student_seeds:
                    for rank in range(1, k + 1):
                        theory = tail_energy(s, rank)
                        if rank < r_star:
                            low = ("C1" in broken and cls == "L0") or (
                                f"C7_deficiency@{cls}" in broken
                            )
                            R = theory * (0.2 if low else 1.03 + 0.01 * seed)
                            if f"C7_tiny@{cls}" in broken:  # deficient students below 10ε
                                R = 5e-3
                            # C1_nan: a diverged L0 student below r* (both seeds: median NaN)
                            if "C1_nan" in broken and cls == "L0" and ts == task_seeds[0]:
                                R = np.nan
                        elif rank == r_star and (
                            ("C2" in broken and cls == "L0")
                            or ("C7" in broken and cls == "L4")
                            or f"C7_achieve@{cls}" in broken
                        ):
                            R = 0.05
                        else:
                            R = 2e-4 * (1 + seed)
                        first = ts == task_seeds[0] and seed == student_seeds[0]
                        spec = (
                            _learned_spectrum(rung, r_star, k, broken, first)
                            if rank == k
                            else np.concatenate([s[:rank] * 1.3, np.zeros(k - min(rank, r_star))])[
                                :k
                            ]
                        )
                        rows.append(
                            {
                                **task,
                                "student_class": rung,
                                "static_student": False,
                                "rank": rank,
                                "seed": seed,
                                "train_mse": R * 0.98,
                                "test_mse": R,
                                "R": R,
                                "R_theory": theory,
                                "steps": 300,
                                "converged": bool(R <= eps),
                                "spectrum": list(spec),
                            }
                        )
                    for j, scls in enumerate(("L0", "L1")):
                        R = _static_risk(rung, broken) * (1 + 2 * j) + 0.001 * seed
                        # C6_nan: the static students of one λ-rung task diverged
                        if "C6_nan" in broken and rung == "Lam0.50" and ts == task_seeds[0]:
                            R = np.nan
                        spec = np.linspace(1.0, 0.1, n)
                        rows.append(
                            {
                                **task,
                                "student_class": scls,
                                "static_student": True,
                                "rank": n,
                                "seed": seed,
                                "train_mse": R * 0.98,
                                "test_mse": R,
                                "R": R,
                                "R_theory": 0.0,
                                "steps": 300,
                                "converged": bool(R <= eps),
                                "spectrum": list(spec),
                            }
                        )
    return pd.DataFrame(rows)


def fabricate_dynamics(
    metrics: pd.DataFrame, steps=(0, 50, 100, 150, 200, 250, 300)
) -> pd.DataFrame:
    """train_dynamics: spectra that grow from the small init towards the final learned spectrum,
    the larger singular values first (the incremental learning of small-init GD)."""
    rows = []
    full = metrics[~metrics["static_student"]]
    full = full[full["rank"] >= full.groupby("task_id")["rank"].transform("max") - 1]
    for rec in full.itertuples(index=False):
        final = np.asarray(rec.spectrum)
        tau = 30.0 / np.maximum(final, 1e-3)
        for t in steps:
            spec = final * (1 - np.exp(-t / tau)) + 1e-2 * np.exp(-t / 40.0)
            rows.append(
                {
                    "task_id": rec.task_id,
                    "rung": rec.rung,
                    "r_star": rec.r_star,
                    "student_class": rec.student_class,
                    "static_student": rec.static_student,
                    "rank": rec.rank,
                    "seed": rec.seed,
                    "step": t,
                    "spectrum": list(np.sort(spec)[::-1]),
                }
            )
    return pd.DataFrame(rows)


def fabricate_loss(metrics: pd.DataFrame, steps=(0, 100, 200, 300)) -> pd.DataFrame:
    rows = []
    for rec in metrics.itertuples(index=False):
        for t in steps:
            rows.append(
                {
                    "task_id": rec.task_id,
                    "rung": rec.rung,
                    "student_class": rec.student_class,
                    "static_student": rec.static_student,
                    "rank": rec.rank,
                    "seed": rec.seed,
                    "step": t,
                    "train_loss": rec.train_mse + np.exp(-t / 50.0),
                }
            )
    return pd.DataFrame(rows)


def fabricate_predictions(
    rungs=ALL_RUNGS,
    r_stars=(1, 2, 4),
    task_seeds=(0, 1),
    n: int = 8,
    d: int = 8,
    sigmas=(0.0, 0.05),
    broken=(),
) -> pd.DataFrame:
    """data_only_predictions: P_static right on the static rungs and wrong on L3/L4, P_attn right on L3."""
    broken = set(broken)
    rows = []
    for rung in rungs:
        cls, lam = parse_rung(rung)
        for r_star in r_stars:
            for ts in task_seeds:
                key = {
                    "task_id": f"{rung}_r{r_star}_s{ts}",
                    "class": rung,
                    "r_star": r_star,
                    "seed": ts,
                }
                for sigma in sigmas:
                    if cls in ("L0", "L1", "L2"):
                        st = r_star
                        if "C4_noisy" in broken and cls == "L0" and sigma > 0:
                            st = r_star + 1
                        if "C6_static" in broken and cls == "L1":
                            st = r_star + 1
                        if "C6_static@L2" in broken and cls == "L2":
                            st = r_star + 1
                        if (
                            "C4" in broken
                            and cls == "L0"
                            and sigma == 0
                            and r_star == r_stars[0]
                            and ts == 0
                        ):
                            st = r_star + 1
                    elif cls == "L3":
                        st = r_star if ("C5" in broken or "C5_match" in broken) else n
                    elif cls == "L4":
                        match = "C5_match" in broken or "C6_attention" in broken
                        st = r_star if match else n
                    else:
                        st = r_star + (1 if lam > 0.5 else 0)
                    at = r_star if cls in ("L0", "L3") or (cls == "L4" and ts == 0) else d
                    share = _static_share(rung, broken) - (0.001 if sigma > 0 else 0.0)
                    for est in ESTIMATORS:
                        rows.append(
                            {
                                **key,
                                "sigma": sigma,
                                "predictor": "P_static",
                                "estimator": est,
                                "r_hat": float(max(st + OFFSET[est], 0.5)),
                                "static_fit_share": share,
                            }
                        )
                        rows.append(
                            {
                                **key,
                                "sigma": sigma,
                                "predictor": "P_attn",
                                "estimator": est,
                                "r_hat": float(max(at + OFFSET[est], 0.5)),
                                "static_fit_share": np.nan,
                            }
                        )
    return pd.DataFrame(rows)


def fabricate_frontier(
    n_values=(4, 8, 16),
    d: int = 8,
    sigmas=(0.0, 0.01, 0.05, 0.1),
    betas=(0.25, 1.0, 2.0, 4.0),
    r_stars=(1, 2, 4),
    seeds=(0, 1),
    broken=(),
) -> pd.DataFrame:
    """frontier: L3 P_attn exact for n ≥ d (any σ once n ≥ 2d); L4 partial and worse at large β,
    where r_E(0.99) errs by one and the other estimators by two (plus their offsets); P_invert
    exact without noise, lost at σ = 0.01. v3's switches: ``C9_full`` (L4 fully recoverable),
    ``C9_flat_beta`` (L4's exactness independent of β), ``C8_v3_accuracy`` (r_E(0.99) errs by
    three on L4), ``C8_v3_robust`` (the stable rank errs by three more on L3 than on L4)."""
    broken = set(broken)
    rows = []
    for cls in ("L3", "L4"):
        for vm in ("known", "unknown"):
            for n in n_values:
                for sigma in sigmas:
                    for beta in betas if cls == "L4" else [np.nan]:
                        for r_star in r_stars:
                            for seed in seeds:
                                key = {
                                    "class": cls,
                                    "value_map": vm,
                                    "n": n,
                                    "d": d,
                                    "sigma": sigma,
                                    "beta": beta,
                                    "r_star": r_star,
                                    "seed": seed,
                                }
                                if cls == "L3":
                                    ok = n >= d and (sigma == 0 or n >= 2 * d)
                                    if "C9" in broken and n >= 2 * d and sigma == max(sigmas):
                                        ok = False
                                    if "C9_noisy" in broken and sigma > 0:
                                        ok = False
                                elif "C9_full" in broken:
                                    ok = True
                                elif "C9_flat_beta" in broken:
                                    ok = n >= 2 * d and seed == 0
                                else:  # partial on every teacher: its smallest β at n ≥ 2d
                                    ok = beta <= min(betas) and n >= 2 * d
                                preds = {"P_attn": r_star if ok else r_star + 2}
                                if n * d <= 512:
                                    preds["P_static"] = n
                                if cls == "L4" and vm == "known" and n <= d:
                                    robust = "C9_invert_robust" in broken and beta <= 2
                                    preds["P_invert"] = (
                                        r_star
                                        if ((sigma == 0 or robust) and beta <= 2)
                                        else r_star + 3
                                    )
                                for pred, val in preds.items():
                                    for est in FRONTIER_ESTIMATORS:
                                        v = val + OFFSET[est]
                                        if pred == "P_attn" and cls == "L4" and not ok:
                                            if est == "energy_0.99":
                                                v = r_star + (
                                                    3 if "C8_v3_accuracy" in broken else 1
                                                )
                                        if "C8_v3_robust" in broken and est == "stable":
                                            v += 3 if cls == "L3" and pred == "P_attn" else 0
                                        rows.append(
                                            {
                                                **key,
                                                "predictor": pred,
                                                "estimator": est,
                                                "r_hat": float(max(v, 0.5)),
                                            }
                                        )
    return pd.DataFrame(rows)


def fabricate(broken=(), rungs=ALL_RUNGS, frontier_seeds=(0, 1), **kw) -> dict[str, pd.DataFrame]:
    """Every cached table, keyed by file stem (``train_metrics``, ``frontier``, ...);
    ``frontier_seeds``: the frontier teachers' seeds."""
    metrics = fabricate_metrics(rungs=rungs, broken=broken, **kw)
    if "C5_absent" in broken:  # one L4 task never trained (its jobs lost): only P_static knows it
        metrics = metrics[metrics["task_id"] != "L4_r1_s0"].reset_index(drop=True)
    return {
        "data_only_predictions": fabricate_predictions(
            rungs=rungs, broken=broken, task_seeds=kw.get("task_seeds", (0, 1))
        ),
        "frontier": fabricate_frontier(seeds=frontier_seeds, broken=broken),
        "train_metrics": metrics,
        "train_dynamics": fabricate_dynamics(metrics),
        "train_loss": fabricate_loss(metrics),
    }
