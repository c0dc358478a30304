"""Stage ``predict`` (workflow/rules/predict.smk): the data-only spectra and predictions of the
tasks of one job (every task, or those of one random stream: tasks/grid.py's ``specs_by_stream``);
the jobs' spectra are merged, and read into predictions, by predict/tables.py."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from entropic_bound.core.progress import report
from entropic_bound.core.rungs import is_softmax
from entropic_bound.core.seeds import noisy_copy_rng
from entropic_bound.predict.attention import (
    attention_native_pinv,
    attention_native_spectrum_streamed,
)
from entropic_bound.predict.static import (
    StaticLeastSquares,
    predict_static,
    static_chunk_rows,
    static_chunks,
)
from entropic_bound.predict.tables import predictions_of
from entropic_bound.tasks.files import load_task, write_gram


def attention_native_pinv_of(X: np.ndarray, rows: int | None = None):
    """P_attn's X side, X̃⁺: [1, B, d, n] (as predict_attention_native computes it), from X in any
    float dtype, ``rows`` sequences at a time widened to float64 (None: P_static's chunks,
    predict/static.py's ``static_chunk_rows``); each sequence's X̃⁺ is its own, so the chunks give
    the one call's floats without a whole float64 copy of X."""
    import torch

    B, n, d = X.shape
    rows = static_chunk_rows(B, n * d) if rows is None else rows
    try:
        if rows >= B:
            return attention_native_pinv(torch.as_tensor(X, dtype=torch.float64).unsqueeze(0))
        pinv = torch.empty(1, B, d, n, dtype=torch.float64)
        for lo, hi in static_chunks(B, rows):
            part = torch.as_tensor(X[lo:hi], dtype=torch.float64).unsqueeze(0)
            pinv[:, lo:hi] = attention_native_pinv(part)
        return pinv
    except RuntimeError:
        raise ValueError(
            "P_attn: a sequence's token matrix is singular; drop degenerate "
            "sequences (e.g. repeated tokens)"
        ) from None


def attention_native_spectrum_of(
    pinv, Y: np.ndarray, noise: np.ndarray | None = None, scale: float = 0.0, rows=None
) -> np.ndarray:
    """P_attn's spectrum [d] from a cached X̃⁺ (as predict_attention_native computes it) of Y, or
    of its noisy copy Y + scale·noise (in float64), made ``rows`` sequences at a time (None:
    P_static's chunks): no whole float64 copy of Y, its noisy copy or Z."""
    import torch

    B, n, dv = Y.shape
    rows = static_chunk_rows(B, n * dv) if rows is None else rows

    def targets(lo: int, hi: int):
        Yc = np.asarray(Y[lo:hi], dtype=np.float64)
        if noise is not None and scale:
            Yc = Yc + scale * noise[lo:hi]
        return torch.as_tensor(Yc, dtype=torch.float64).unsqueeze(0)

    return attention_native_spectrum_streamed(pinv, targets, rows, dv)[0].numpy()


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
    return predictions_of(cfg, data_only_spectra(cfg, task_paths, progress))


def data_only_spectra(cfg: dict, task_paths, progress=None, gram_out=None) -> pd.DataFrame:
    """The spectra of P_static (with its static-fit share) and P_attn on every task, clean and
    noisy copies: one row per (task, σ, predictor), in the order of ``task_paths``, with the
    ``spectrum`` (float64, descending); X3's ladder reads P_attn's (exploratory/floor_aware.py).

    ``gram_out``: a path where P_static's Σ xᵀx of the first X factorised (float64 [nd, nd]) is
    written with the ids of the tasks whose X it is (:func:`write_gram`): the best bounds of the
    static rungs read it as their moment G (bounds/moments.py) instead of forming it again."""
    p = cfg["predict"]
    per_task: dict[int, tuple[list, list]] = {}
    # the rungs of one (r*, seed) share their inputs X (tasks/make.py): visiting the tasks grouped
    # by X, the X side of both predictors (P_static's least-squares factorisation, P_attn's
    # per-sequence X̃⁺) is computed once per distinct X and one is held at a time (the results
    # are those of computing it per call); the table keeps the order of task_paths
    order = sorted(range(len(task_paths)), key=lambda i: _shared_input_key(task_paths[i]))
    # (X as stored in float32, its StaticLeastSquares, X̃⁺ [1, B, d, n]): X and Y stay float32 as
    # stored; both predictors widen chunks of sequences to float64 (their sums are those of the
    # whole float64 arrays, bitwise), so no whole float64 copy of a task's data is held
    shared: tuple = (None, None, None)
    noise_of: tuple = (None, None)  # ((r*, seed), its noise draw): one array per shared X
    gram: list = []  # [Σ xᵀx of the first X, its group (a count of Xs), the ids of its tasks]
    group = 0
    for done, i in enumerate(order, 1):
        arrays, meta = load_task(task_paths[i])
        X, Y = arrays["X_train"], arrays["Y_train"]
        del arrays  # the test split is not read here: hold one copy of the data, not two
        # the group's X is compared as stored (float32)
        if shared[0] is None or not np.array_equal(shared[0], X):
            shared = (None, None, None)  # free the previous factorisations first
            group += 1
            lsq = StaticLeastSquares(X, keep_gram=gram_out is not None and not gram)
            if lsq.gram is not None:
                gram, lsq.gram = [lsq.gram[0].numpy(), group, []], None
            shared = (X, lsq, attention_native_pinv_of(X))
            lsq = None
        if gram and gram[1] == group:
            gram[2].append(meta["task_id"])
        X = shared[0]  # one X per group (equal values)
        rows, spectra = per_task[i] = ([], [])
        key_rs = (meta["r_star"], meta["seed"], Y.shape)
        if noise_of[0] != key_rs:
            # the noise of a noisy copy depends on (r*, seed) alone, so the tasks that share X
            # share one draw (and P_static's factored route its K(noise): predict/static.py)
            rng = noisy_copy_rng(cfg["seed"], meta["r_star"], meta["seed"])
            noise_of = (None, None)  # free the previous draw first
            noise_of = (key_rs, rng.standard_normal(Y.shape))
        noise = noise_of[1]
        for sigma in [meta["sigma"], *p["noisy_sigmas"]]:
            if sigma < meta["sigma"]:
                continue  # a copy cannot be less noisy than the task itself
            # independent noise adds in variance: total σ² = σ₀² + (σ² − σ₀²)
            scale = 0.0 if sigma == meta["sigma"] else np.sqrt(sigma**2 - meta["sigma"] ** 2)
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
            spectra.append(attention_native_spectrum_of(shared[2], Y, noise, scale))
        X = Y = None  # free this task's arrays before the next task is made
        report(progress, done, len(task_paths))
    if gram_out is not None:  # (a job without tasks writes an empty one)
        write_gram(gram_out, *((gram[0], gram[2]) if gram else (np.zeros((0, 0)),)))
    rows = [r for i in range(len(task_paths)) for r in per_task[i][0]]
    spectra = [s for i in range(len(task_paths)) for s in per_task[i][1]]
    column = np.empty(len(spectra), dtype=object)  # one array a row (lengths n and d)
    for j, spectrum in enumerate(spectra):
        column[j] = spectrum
    return pd.DataFrame(rows).assign(spectrum=column)
