"""Teacher tasks: every rung of the interpolation ladder (docs/method.md §1).

A task is fully determined by (rung, r*, gain, κ, β, σ, n, d, value map, seed). The random
stream depends on (base seed, r*, seed) only and draws the kernel factors ([k, r*] each, k the
kernel size), V, P, then the data; so the rungs of one (r*, seed) whose kernels have one size
share their kernel factors, value map, positional embedding, inputs X and noise E: every rung
when n = d, and L0/L1 (k = n) apart from L2–L4 (k = d) when n ≠ d. The ladder is a controlled
comparison in which only the mixing operator changes. How the data are made in chunks:
tasks/data.py; what a task file holds and how it is read: tasks/files.py.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import torch

from entropic_bound.core.rungs import kernel_dim, kernel_norm
from entropic_bound.core.seeds import task_stream
from entropic_bound.tasks.data import CHUNK_VALUES, generate_data, one_thread
from entropic_bound.tasks.grid import TaskSpec, task_specs  # noqa: F401  (task_specs: re-exported, the public API)


def haar_orthonormal(rows: int, cols: int, gen: torch.Generator) -> torch.Tensor:
    """Haar-distributed matrix with orthonormal columns (QR with the sign fix of Mezzadri)."""
    if cols > rows:
        raise ValueError(f"cannot draw {cols} orthonormal columns in dimension {rows}")
    g = torch.randn(rows, cols, generator=gen, dtype=torch.float64)
    q, r = torch.linalg.qr(g)
    return q * torch.sign(torch.diagonal(r)).unsqueeze(0)


def teacher_kernel(
    k: int, r_star: int, kappa: float, fro_norm: float, gen: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """U diag(s) Wᵀ with s = linspace(1, 1/κ, r*) rescaled to Frobenius norm ``fro_norm``."""
    if not 1 <= r_star <= k:
        raise ValueError(f"r* = {r_star} must lie in 1..{k}")
    U = haar_orthonormal(k, r_star, gen)
    W = haar_orthonormal(k, r_star, gen)
    s = torch.linspace(1.0, 1.0 / kappa, r_star, dtype=torch.float64)
    s = s * fro_norm / torch.linalg.vector_norm(s)
    return (U * s) @ W.T, s


@dataclass(frozen=True)
class Teacher:
    """A task's teacher in float64: ``kernel`` [k, k], its singular values ``s`` [r*], the value
    map ``V`` [d, d] and the positional embedding ``P`` [n, d]."""

    kernel: torch.Tensor
    s: torch.Tensor
    V: torch.Tensor
    P: torch.Tensor


@one_thread()  # LAPACK's QR, like the data (tasks/data.py), may round by thread count
def draw_teacher(spec: TaskSpec) -> tuple[Teacher, torch.Generator]:
    """The task's teacher, and its stream where the data start (X_train: tasks/data.py)."""
    n, d = spec.n, spec.d
    k = kernel_dim(spec.rung, n, d)
    if not 1 <= spec.r_star <= k:
        raise ValueError(f"task {spec.task_id}: r* = {spec.r_star} must lie in 1..{k}")
    gen = task_stream(spec.base_seed, spec.r_star, spec.seed)
    kernel, s = teacher_kernel(
        k, spec.r_star, spec.kappa, kernel_norm(spec.rung, n, d, spec.gain), gen
    )
    V_haar = haar_orthonormal(d, d, gen)
    V = V_haar if spec.value_map == "unknown" else torch.eye(d, dtype=torch.float64)
    P = haar_orthonormal(n, d, gen) * n**0.5 if n >= d else haar_orthonormal(d, n, gen).T * n**0.5
    return Teacher(kernel, s, V, P), gen


def teacher_arrays(spec: TaskSpec, teacher: Teacher, clean_power: float) -> dict[str, np.ndarray]:
    """What a task file holds besides the data: kernel, V, P (float32), spectrum, meta (JSON)."""
    meta = spec.meta()
    meta["test_clean_power"] = clean_power
    meta["kernel_singular_values"] = teacher.s.tolist()
    return {
        "kernel": teacher.kernel.float().numpy(),
        "V": teacher.V.float().numpy(),
        "P": teacher.P.float().numpy(),
        "spectrum": teacher.s.numpy(),
        "meta": np.array(json.dumps(meta)),
    }


def make_task(spec: TaskSpec, *, chunk_values: int = CHUNK_VALUES) -> dict[str, np.ndarray]:
    """Arrays of one task: X/Y train and test [B, n, d] float32, kernel, V, P, spectrum, meta.

    The data are made in chunks of ``chunk_values`` values (tasks/data.py): bitwise the arrays of
    drawing each in one piece, with a peak memory of a few chunks over the float32 result."""
    teacher, gen = draw_teacher(spec)
    made = generate_data(spec, teacher, gen, chunk_values=chunk_values)
    return {**made.arrays, **teacher_arrays(spec, teacher, made.clean_power)}


def task_pair(task) -> tuple[dict[str, np.ndarray], dict]:
    """(arrays, meta), as ``load_task`` returns a task and ``train_students`` takes it, from
    either that pair or :func:`make_task`'s dict (whose ``meta`` is a JSON string)."""
    if isinstance(task, tuple) and len(task) == 2 and isinstance(task[1], dict):
        return task
    if isinstance(task, dict) and "meta" in task:
        arrays = {k: v for k, v in task.items() if k != "meta"}
        return arrays, json.loads(str(task["meta"]))
    raise ValueError(
        "a task is (arrays, meta) as tasks.load_task returns it, or the dict of "
        f"tasks.make_task; got {type(task).__name__}"
    )
