"""Teacher tasks: every rung of the interpolation ladder (docs/method.md §1).

A task is fully determined by (rung, r*, gain, κ, β, σ, n, d, value map, seed). The random
stream depends on (base seed, r*, seed) only, so the rungs of one (r*, seed) share their
kernel factors, value map, positional embedding and inputs: the ladder is a controlled
comparison in which only the mixing operator changes.
"""

from __future__ import annotations

import json

import numpy as np
import torch

from entropic_bound.core.rungs import kernel_dim, kernel_norm
from entropic_bound.core.seeds import task_stream
from entropic_bound.tasks.grid import TaskSpec, task_specs  # noqa: F401  (task_specs: re-exported, the public API)
from entropic_bound.tasks.mixing import apply_operator


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


def make_task(spec: TaskSpec) -> dict[str, np.ndarray]:
    """Arrays of one task: X/Y train and test [B, n, d] float32, kernel, V, P, spectrum, meta."""
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
    out: dict[str, np.ndarray] = {}
    for split, size in (("train", spec.n_train), ("test", spec.n_test)):
        X = torch.randn(size, n, d, generator=gen, dtype=torch.float64)
        E = torch.randn(size, n, d, generator=gen, dtype=torch.float64)
        Y = apply_operator(spec.rung, X, kernel, V, beta=spec.beta, P=P)
        out[f"X_{split}"] = X.float().numpy()
        out[f"Y_{split}"] = (Y + spec.sigma * E).float().numpy()
        if split == "test":
            clean_power = float(Y.pow(2).mean())
    meta = spec.meta()
    meta["test_clean_power"] = clean_power
    meta["kernel_singular_values"] = s.tolist()
    out.update(
        kernel=kernel.float().numpy(),
        V=V.float().numpy(),
        P=P.float().numpy(),
        spectrum=s.numpy(),
        meta=np.array(json.dumps(meta)),
    )
    return out


TASK_KEYS = ("X_train", "Y_train", "X_test", "Y_test", "kernel", "V", "P", "meta")


def load_task(path) -> tuple[dict[str, np.ndarray], dict]:
    """Read a task ``.npz``: (arrays, meta). Raises ValueError naming what is wrong."""
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except FileNotFoundError:
        raise ValueError(f"task file {path} does not exist") from None
    except Exception as exc:  # zip/npy format errors come in many types
        raise ValueError(f"task file {path} is not a readable .npz ({exc})") from None
    missing = [k for k in TASK_KEYS if k not in arrays]
    if missing:
        raise ValueError(f"task file {path} lacks {', '.join(missing)}")
    meta = json.loads(str(arrays.pop("meta")))
    for k in ("X_train", "Y_train", "X_test", "Y_test"):
        a = arrays[k]
        if a.ndim != 3 or a.shape[1:] != (meta["n"], meta["d"]):
            raise ValueError(
                f"task file {path}: {k} has shape {a.shape}, expected [B, {meta['n']}, {meta['d']}]"
            )
        if not np.all(np.isfinite(a)):
            raise ValueError(f"task file {path}: {k} contains NaN or Inf")
    return arrays, meta
