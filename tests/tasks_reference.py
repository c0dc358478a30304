"""The reference the chunked task generation is tested against (tests/tasks/test_task_data.py):
make_task as it was before task data could be regenerated, kept verbatim. Its outputs made the
paper's tables; the generation that replaced it must give them bitwise."""

import json

import numpy as np
import torch

from entropic_bound.core.rungs import kernel_dim, kernel_norm
from entropic_bound.core.seeds import task_stream
from entropic_bound.tasks.grid import TaskSpec
from entropic_bound.tasks.make import haar_orthonormal, teacher_kernel
from entropic_bound.tasks.mixing import apply_operator


def make_task_reference(spec: TaskSpec) -> dict[str, np.ndarray]:
    """tasks/make.py's make_task before chunked generation (commit b75390c), verbatim: one draw per
    array, every array of a split in memory at once."""
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
