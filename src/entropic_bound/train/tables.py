"""The tables a training run returns (docs/method.md §4): one metrics row per student, and the
learned spectra and windowed training loss over steps as long tables (engine.py trains).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from entropic_bound.bounds.stage import tail_energy  # defined once, with the other bounds
from entropic_bound.train.backends import Problem, evaluate_fused, evaluate_torch
from entropic_bound.train.layout import StudentLayout


def final_metrics(
    tasks, layout: StudentLayout, prob: Problem, rec, static_student, dev, backend
) -> pd.DataFrame:
    """One row per student: train/test MSE over the whole splits, R, the learned spectrum.

    ``rec``: the engine's Record (train/engine.py; not imported here: engine imports this
    module). Teacher quantities (r*, the tail energy R*(r)) are copied from a task's meta when it has
    them; a rank search trains on tasks stripped of them (search.py), and they come back NaN.
    """
    Qf, Kf, V = prob.shapes.unpack(rec.final)
    A = Qf @ Kf.transpose(-1, -2)
    task_of = torch.as_tensor(layout.task, device=dev)
    with torch.no_grad():
        spectra = torch.linalg.svdvals(A.double()).cpu().numpy()
        rows = []
        for t, (arrays, meta) in enumerate(tasks):
            sel = (task_of == t).nonzero().flatten()
            if not len(sel):
                continue
            mse = {
                split: _split_mse(arrays, split, t, sel, layout, prob, (Qf, Kf, A, V), dev, backend)
                for split in ("train", "test")
            }
            for j, s in enumerate(sel.cpu().numpy()):
                mse_j = (mse["train"][j], mse["test"][j])
                rows.append(
                    _student_row(meta, layout, rec, s, *mse_j, spectra[s], static_student, backend)
                )
    return pd.DataFrame(rows)


def _split_mse(arrays, split: str, t: int, sel, layout, prob: Problem, learned, dev, backend):
    """MSE over task ``t``'s whole ``split`` of the students ``sel``: [len(sel)] float32;
    ``learned``: their final (Q, K, A = Q Kᵀ, V)."""
    Qf, Kf, A, V = learned
    f32 = dict(dtype=torch.float32, device=dev)
    X = torch.as_tensor(arrays[f"X_{split}"]).to(**f32)
    Y = torch.as_tensor(arrays[f"Y_{split}"]).to(**f32)
    cls, beta, P = layout.student_class, prob.beta, prob.P[t]
    if backend == "fused":
        fr = None if prob.factored is None else (prob.factored[sel], Qf[sel], Kf[sel])
        return evaluate_fused(cls, X, Y, A[sel], V[sel], beta, P, fr).numpy()
    Xs = X.expand(len(sel), *X.shape)
    Ys = Y.expand(len(sel), *Y.shape)
    return evaluate_torch(cls, Xs, Ys, A[sel], V[sel], beta, P).cpu().numpy()


def _student_row(
    meta, layout, rec, s, train_mse, test_mse, spectrum, static_student, backend
) -> dict:
    """The metrics row of student ``s``: its task's ``meta``, its MSEs on the whole splits and
    its learned spectrum."""
    teacher = meta.get("kernel_singular_values")
    rank = int(layout.rank[s])
    return {
        "task_id": meta["task_id"],
        "rung": meta["class"],
        "r_star": meta.get("r_star", np.nan),
        "task_seed": meta["seed"],
        "student_class": layout.student_class,
        "static_student": static_student,
        "rank": rank,
        "seed": layout.seed(s),
        "train_mse": float(train_mse),
        "test_mse": float(test_mse),
        "R": float((test_mse - meta["sigma"] ** 2) / meta["test_clean_power"]),
        "R_theory": np.nan if teacher is None else tail_energy(teacher, rank),
        "steps": int(rec.steps[s]),
        "converged": bool(rec.converged[s]),
        "spectrum": spectrum.tolist(),
        "backend": backend,
    }


def long_rows(rows, metrics: pd.DataFrame, value: str) -> pd.DataFrame:
    keys = metrics[["task_id", "rung", "r_star", "student_class", "static_student", "rank", "seed"]]
    out = []
    for ids, step, vals in rows:
        part = keys.iloc[ids].reset_index(drop=True).assign(step=step)
        part[value] = list(vals) if vals.ndim > 1 else vals
        out.append(part)
    df = pd.concat(out, ignore_index=True)
    if value == "spectrum":
        df[value] = df[value].map(lambda a: np.asarray(a, dtype=np.float64).tolist())
    return df.sort_values(["task_id", "rank", "seed", "step"], kind="stable").reset_index(drop=True)
