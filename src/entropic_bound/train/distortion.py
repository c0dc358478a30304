"""Learned kernels where softmax attention is distorted: the table C8_distortion, read by claims
registration v4's C8 (docs/method.md §8, "Two tables for registration v4").

For every L4 task of the run's grid, its teacher (kernel A of rank r*, value map V) and its
tokens X give several *targets*, all on the same A, V and X:

* L4 at each β of ``betas``: ``Y = softmax(β X A Xᵀ/√d) X V + σE``;
* L3, its linear twin: ``Y = (X A Xᵀ/n) X V + σE``.

A task's random stream depends on (base seed, r*, task seed) only and L3, L4 both have a d × d
kernel of norm g√d (tasks/make.py), so the L3 task of the same (r*, seed) draws the same A, V and
X; :func:`distortion_table` checks this by a digest of those arrays and refuses otherwise.
Every target is distorted three ways at once:

* noise: ``σ = sigma_rel · std(Y_clean)``, the population std of that target's own clean
  training targets (each target its own σ); ``E`` is unit normal noise from the teacher's own
  stream (``core.seeds.distortion_noise_stream``), one E for all the targets of a teacher, so
  that between targets only the operator and σ change;
* budget: the first ``B = budget_factor · n · d`` sequences of the task's training set;
* the test split is the task's whole test split, with noise at the same σ; R is the engine's
  ``(MSE_test − σ²) / mean(Y_clean,test²)``.

On each target the full-rank students of its own class (rank = the kernel's size d) are trained
at the run's student seeds with the class's optimiser (``class_optim``), one batched program per
target kind, as ``train_full_rank_by_beta`` does. One row per (teacher, target, student seed):
the engine's metrics columns plus ``teacher`` (the L4 task id), ``beta`` (NaN for L3), ``sigma``
(absolute), ``sigma_rel`` and ``n_train``. On CPU the table is bitwise reproducible for a fixed
config and thread count.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math

import numpy as np

from entropic_bound.core.progress import report
from entropic_bound.tasks.grid import task_specs

#: the conditions of v4.C8 when config/claims.yaml has no v4 section at all
DEFAULT_CONDITIONS = {"betas": [1.0, 2.0, 4.0], "sigma_rel": 0.1, "budget_factor": 1}
#: the engine's metrics row (train/tables.py), in its order: the training metrics' columns
ENGINE_COLUMNS = [
    "task_id",
    "rung",
    "r_star",
    "task_seed",
    "student_class",
    "static_student",
    "rank",
    "seed",
    "train_mse",
    "test_mse",
    "R",
    "R_theory",
    "steps",
    "converged",
    "spectrum",
    "backend",
]
#: what the table adds to the engine's columns
EXTRA_COLUMNS = ["teacher", "beta", "sigma", "sigma_rel", "n_train"]
#: arrays of a task that must be the same in its L3 twin (the shared teacher and tokens)
SHARED = ("kernel", "V", "X_train", "X_test")


def distortion_conditions(claims_cfg: dict) -> dict:
    """``claims_cfg["v4"]["C8"]["conditions"]`` (keys betas, sigma_rel, budget_factor), checked.

    The defaults (:data:`DEFAULT_CONDITIONS`) apply only when the whole ``v4`` section is
    absent; a ``v4`` section without ``C8.conditions``, or conditions without one of the keys,
    is an error."""
    if "v4" not in claims_cfg:
        c = DEFAULT_CONDITIONS
    else:
        try:
            c = claims_cfg["v4"]["C8"]["conditions"]
            c = {k: c[k] for k in DEFAULT_CONDITIONS}
        except (KeyError, TypeError) as exc:
            raise ValueError(
                "config/claims.yaml: v4.C8.conditions needs betas, sigma_rel and "
                f"budget_factor (missing {exc})"
            ) from None
    out = {
        "betas": [float(b) for b in c["betas"]],
        "sigma_rel": float(c["sigma_rel"]),
        "budget_factor": c["budget_factor"],
    }
    if any(not b > 0 for b in out["betas"]) or not out["sigma_rel"] >= 0:
        raise ValueError(f"v4.C8.conditions: β > 0 and sigma_rel ≥ 0, got {out}")
    if not out["budget_factor"] > 0:
        raise ValueError(f"v4.C8.conditions: budget_factor > 0, got {out['budget_factor']}")
    return out


def budget(n: int, d: int, budget_factor, n_train: int) -> int:
    """B = budget_factor · n · d sequences: a whole number in 1..n_train, else ValueError."""
    B = budget_factor * n * d
    if B != math.floor(B) or not 1 <= B <= n_train:
        raise ValueError(
            f"budget_factor {budget_factor} × n·d = {B}: need a whole number of sequences "
            f"in 1..{n_train} (the task's training set)"
        )
    return int(B)


def unit_noise(spec, n_train: int) -> tuple[np.ndarray, np.ndarray]:
    """The teacher's unit noise E for ``n_train`` training and the task's test sequences,
    [B, n, d] and [n_test, n, d] float64, from its distortion stream (E_train drawn first)."""
    import torch

    from entropic_bound.core.seeds import distortion_noise_stream

    gen = distortion_noise_stream(spec.base_seed, spec.r_star, spec.seed)
    shape = (spec.n, spec.d)
    E_train = torch.randn(n_train, *shape, generator=gen, dtype=torch.float64)
    E_test = torch.randn(spec.n_test, *shape, generator=gen, dtype=torch.float64)
    return E_train.numpy(), E_test.numpy()


def distorted(task: dict, E: tuple[np.ndarray, np.ndarray], sigma_rel: float, B: int):
    """(arrays, meta, σ) of one target: ``task`` (make_task's dict, clean) cut to its first B
    training sequences, σ = sigma_rel · std(its clean training targets), Y + σE on both splits."""
    arrays = {k: v for k, v in task.items() if k != "meta"}
    meta = json.loads(str(task["meta"]))
    E_train, E_test = E
    clean = arrays["Y_train"][:B].astype(np.float64)
    sigma = sigma_rel * float(clean.std())
    arrays["X_train"] = arrays["X_train"][:B].copy()  # not a view: the whole split is freed
    arrays["Y_train"] = (clean + sigma * E_train).astype(np.float32)
    arrays["Y_test"] = (arrays["Y_test"].astype(np.float64) + sigma * E_test).astype(np.float32)
    meta.update(sigma=sigma, n_train=B)
    return arrays, meta, sigma


def shared_digest(task: dict) -> str:
    """sha256 of a task's :data:`SHARED` arrays (its teacher's A, V and its tokens X)."""
    h = hashlib.sha256()
    for a in SHARED:
        h.update(np.ascontiguousarray(task[a]).data)
    return h.hexdigest()


def target(spec, kind, conditions: dict) -> tuple[dict, dict, float, str]:
    """One target of the L4 task ``spec``: ``kind`` a β (L4 at that temperature) or "L3" (its
    linear twin), distorted (:func:`distorted`): (arrays, meta, σ, :func:`shared_digest` of the
    clean task, the same for every target of one teacher)."""
    from entropic_bound.tasks.make import make_task

    B = budget(spec.n, spec.d, conditions["budget_factor"], spec.n_train)
    clean = make_task(
        dataclasses.replace(spec, rung="L3")
        if kind == "L3"
        else dataclasses.replace(spec, beta=float(kind))
    )
    arrays, meta, sigma = distorted(clean, unit_noise(spec, B), conditions["sigma_rel"], B)
    return arrays, meta, sigma, shared_digest(clean)


def distortion_table(cfg: dict, conditions: dict, progress=None):
    """C8_distortion (a DataFrame): the full-rank students of every target of every L4 task of
    ``cfg``'s grid (module docstring); ``progress(done, total)`` after each target kind (β, then
    L3). The module imports neither torch nor pandas: the workflow reads
    :func:`distortion_conditions` when it builds the DAG."""
    import pandas as pd

    from entropic_bound.config.load import class_optim
    from entropic_bound.core.rungs import kernel_dim
    from entropic_bound.train.engine import Optim, train_students
    from entropic_bound.train.stage import run_settings

    columns = [*ENGINE_COLUMNS, *EXTRA_COLUMNS]
    specs = [s for s in task_specs(cfg) if s.rung == "L4"]
    if not specs:
        return pd.DataFrame(columns=columns)
    kinds = [float(b) for b in conditions["betas"]] + ["L3"]
    t = cfg["train"]
    digests: dict[str, str] = {}  # teacher -> the digest of its A, V, X
    parts = []
    for done, kind in enumerate(kinds, 1):
        rung = "L3" if kind == "L3" else "L4"
        per = [target(s, kind, conditions) for s in specs]  # one kind at a time: memory
        for s, (*_, digest) in zip(specs, per):
            if digests.setdefault(s.task_id, digest) != digest:
                raise ValueError(f"{s.task_id}: target {kind} does not share the teacher's A, V, X")
        out = train_students(
            [(arrays, meta) for arrays, meta, *_ in per],
            rung,
            [kernel_dim(rung, cfg["task"]["n"], cfg["task"]["d"])],
            t["student_seeds"],
            Optim.from_config(class_optim(cfg, rung)),
            **run_settings(cfg),
        )["metrics"]
        ids = [meta["task_id"] for _, meta, *_ in per]
        out["teacher"] = out["task_id"].map(dict(zip(ids, (s.task_id for s in specs))))
        out["beta"] = math.nan if kind == "L3" else kind
        out["sigma"] = out["task_id"].map(dict(zip(ids, (p[2] for p in per)))).astype(np.float64)
        out["sigma_rel"] = conditions["sigma_rel"]
        out["n_train"] = per[0][1]["n_train"]
        parts.append(out)
        report(progress, done, len(kinds))
    return pd.concat(parts, ignore_index=True)[columns]
