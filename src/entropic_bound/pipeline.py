"""Stage functions the workflow scripts call: plain Python, usable without Snakemake."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from .analysis_common import PREDICTION_COLUMNS
from .estimators import estimates_long
from .io import write_npz
from .predictors import (
    StaticLeastSquares,
    attention_native_pinv,
    attention_native_spectrum,
    predict_static,
)
from .progress import report
from .rungs import is_softmax
from .seeds import noisy_copy_rng
from .taskgrid import specs_of_rung
from .tasks import load_task, make_task


def write_tasks(cfg: dict, rung: str, out_dir, progress=None) -> list[Path]:
    paths = []
    specs = specs_of_rung(cfg, rung)
    for spec in specs:
        path = Path(out_dir) / f"{spec.task_id}.npz"
        write_npz(path, **make_task(spec))
        paths.append(path)
        report(progress, len(paths), len(specs))
    return paths


def attention_native_pinv_of(X: np.ndarray):
    """P_attn's X side, X̃⁺: [1, B, d, n] (as predict_attention_native computes it)."""
    import torch

    X = torch.as_tensor(X, dtype=torch.float64).unsqueeze(0)
    try:
        return attention_native_pinv(X)
    except RuntimeError:
        raise ValueError(
            "P_attn: a sequence's token matrix is singular; drop degenerate "
            "sequences (e.g. repeated tokens)"
        ) from None


def attention_native_spectrum_of(pinv, Y: np.ndarray) -> np.ndarray:
    """P_attn's spectrum [d] from a cached X̃⁺ (as predict_attention_native computes it)."""
    import torch

    Y = torch.as_tensor(Y, dtype=torch.float64).unsqueeze(0)
    return attention_native_spectrum(pinv, Y)[0].numpy()


def _shared_input_key(path) -> tuple:
    """(r*, seed) of a task file, read from its meta alone: the tasks that share X."""
    try:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(str(z["meta"]))
        return (meta["r_star"], meta["seed"])
    except Exception:  # unreadable: load_task says what is wrong when its turn comes
        return (-1, -1)


def data_only_predictions(cfg: dict, task_paths, progress=None) -> pd.DataFrame:
    """P_static (with its static-fit share) and P_attn on every task, clean and noisy copies;
    ``progress(done, total)`` after each task (see progress.py)."""
    p = cfg["predict"]
    per_task: dict[int, tuple[list, list]] = {}
    # the rungs of one (r*, seed) share their inputs X (tasks.py): visiting the tasks grouped
    # by X, the X side of both predictors (P_static's least-squares factorisation, P_attn's
    # per-sequence X̃⁺) is computed once per distinct X and one is held at a time (the results
    # are those of computing it per call); the table keeps the order of task_paths
    order = sorted(range(len(task_paths)), key=lambda i: _shared_input_key(task_paths[i]))
    shared: tuple = (None, None, None)  # (X, StaticLeastSquares, X̃⁺ [1, B, d, n])
    noise_of: tuple = (None, None)  # ((r*, seed), its noise draw): one array per shared X
    for done, i in enumerate(order, 1):
        arrays, meta = load_task(task_paths[i])
        X, Y = arrays["X_train"].astype(np.float64), arrays["Y_train"].astype(np.float64)
        if shared[0] is None or not np.array_equal(shared[0], X):
            shared = (None, None, None)  # free the previous factorisations first
            shared = (X, StaticLeastSquares(X), attention_native_pinv_of(X))
        rows, spectra = per_task[i] = ([], [])
        key_rs = (meta["r_star"], meta["seed"], Y.shape)
        if noise_of[0] != key_rs:
            # the noise of a noisy copy depends on (r*, seed) alone, so the tasks that share X
            # share one draw (and P_static's factored route its K(noise): static_predictor.py)
            rng = noisy_copy_rng(cfg["seed"], meta["r_star"], meta["seed"])
            noise_of = (key_rs, rng.standard_normal(Y.shape))
        noise = noise_of[1]
        for sigma in [meta["sigma"], *p["noisy_sigmas"]]:
            if sigma < meta["sigma"]:
                continue  # a copy cannot be less noisy than the task itself
            # independent noise adds in variance: total σ² = σ₀² + (σ² − σ₀²)
            scale = 0.0 if sigma == meta["sigma"] else np.sqrt(sigma**2 - meta["sigma"] ** 2)
            Ys = Y + scale * noise if scale else Y
            key = {
                "task_id": meta["task_id"],
                "class": meta["class"],
                "r_star": meta["r_star"],
                "seed": meta["seed"],
                "sigma": sigma,
            }
            st = predict_static(
                X,
                Y,
                softmax=is_softmax(meta["class"]),
                clip=p["clip"],
                lstsq=shared[1],
                noise=noise if scale else None,
                scale=scale,
            )
            rows.append(
                {**key, "predictor": "P_static", "static_fit_share": float(st["static_fit_share"])}
            )
            spectra.append(st["spectrum"])
            rows.append({**key, "predictor": "P_attn", "static_fit_share": np.nan})
            spectra.append(attention_native_spectrum_of(shared[2], Ys))
        report(progress, done, len(task_paths))
    rows = [r for i in range(len(task_paths)) for r in per_task[i][0]]
    spectra = [s for i in range(len(task_paths)) for s in per_task[i][1]]
    out = estimates_long(pd.DataFrame(rows), spectra, taus=p["taus"], tol=p["tol"])
    return out[list(PREDICTION_COLUMNS)]


def train_chunk(
    cfg: dict, rung: str, kind: str, task_paths, progress=None
) -> dict[str, pd.DataFrame]:
    """Train one job's students: the rung's own class over its ranks (``kind="sweep"``: every
    rank 1…k, or the ranks a search picks when ``train.ranks: search``), or the static L0 and
    L1 students at full rank n (``kind="static"``). ``progress``: see engine.train_students."""
    import sys

    from .config import class_optim
    from .engine import Optim, train_students
    from .rungs import kernel_dim, parse_rung
    from .search import train_by_search

    tasks = [load_task(p) for p in task_paths]
    t = cfg["train"]
    n, d = cfg["task"]["n"], cfg["task"]["d"]
    search = t.get("ranks", "all") == "search"
    if kind == "sweep":
        jobs = [(rung, list(range(1, kernel_dim(rung, n, d) + 1)), False)]
    elif kind == "static":
        jobs = [("L0", [n], True), ("L1", [n], True)]
    else:
        raise ValueError(f"unknown training kind {kind!r}; use sweep or static")
    parts: dict[str, list[pd.DataFrame]] = {"metrics": [], "dynamics": [], "loss": []}
    for student_class, ranks, static in jobs:
        optim = Optim.from_config(class_optim(cfg, parse_rung(student_class)[0]))
        kw = dict(
            init_scale=t["init_scale"],
            epsilon=t["epsilon"],
            checkpoints=t["checkpoints"],
            base_seed=cfg["seed"],
            static_student=static,
            device=cfg["device"],
            backend=t.get("backend", "auto"),
            products=t.get("products", "auto"),
            progress=progress,
        )
        if search and not static:
            out = train_by_search(
                tasks, student_class, t["student_seeds"], optim, k=ranks[-1], **kw
            )
            for row in out.pop("search").itertuples():
                print(
                    f"rank search {row.task_id}: r_emp {row.r_emp:g} after {row.rounds} rounds; "
                    f"trained ranks {row.ranks_trained}",
                    file=sys.stderr,
                )
        else:
            out = train_students(tasks, student_class, ranks, t["student_seeds"], optim, **kw)
        for k, v in out.items():
            parts[k].append(v)
    return {k: pd.concat(v, ignore_index=True) for k, v in parts.items()}


def claims_after_failure(cfg: dict, claims_cfg: dict, run_dir) -> pd.DataFrame:
    """The claims table of a run in which some jobs failed (Snakemake's ``onerror``).

    Reads whatever tables exist; the training tables are assembled from the training jobs that
    finished. A claim whose input is absent says "missing input", never "reproduced". Written
    to ``<run_dir>/partial/`` (claims.csv, claims.md with a "Partial run" banner), never over
    the outputs of rule ``claims``: a later successful run removes the directory
    (``io.clear_partial``), so no banner outlives the failure that caused it.
    """
    from .claims import claims_markdown, evaluate_claims, load_tables
    from .io import PARTIAL_DIR, provenance, read_table, write_table, write_text

    run_dir = Path(run_dir)
    tables = load_tables(run_dir / "tables")
    for name, suffix in (("train_metrics", "metrics"), ("train_dynamics", "dynamics")):
        if tables.get(name) is None:
            parts = sorted((run_dir / "train").glob(f"*/*.{suffix}.parquet"))
            tables[name] = (
                pd.concat([read_table(p) for p in parts], ignore_index=True) if parts else None
            )
    table = evaluate_claims(tables, claims_cfg)
    prov = provenance(cfg, rule="onerror", partial=True)
    out = run_dir / PARTIAL_DIR
    write_table(table, out / "claims.csv", prov)
    write_text(
        out / "claims.md",
        "**Partial run: some jobs failed; claims that need their "
        "outputs say `missing input`.**\n\n" + claims_markdown(table, prov),
        prov,
    )
    return table
