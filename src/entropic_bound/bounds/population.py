"""The exact population risk of a static-mixing student, and its minimum over rank-r kernels
(docs/method.md §5b, "Best-known bounds": the population objective).

Where the mixing does not look at the input (L0, L1, L2: M = act(bias), tasks/mixing.py's
:func:`~entropic_bound.tasks.mixing.static_mixing`), a task is Y = M X V* and a student M' X V.
X has i.i.d. standard normal entries, so E‖A X B‖²_F = ‖A‖²_F ‖B‖²_F and
E⟨A X B, C X D⟩ = ⟨A, C⟩_F ⟨B, D⟩_F; the best V is a multiple of V*, and the relative excess
risk of the student is

    R(M') = 1 − ⟨M, M'⟩²_F / (‖M‖²_F ‖M'‖²_F),

one minus the squared cosine between the two mixing matrices: no sample, no V. The minimum over
the class's rank-r kernels is found by L-BFGS in float64 from registered starts, problems of
one rung batched as bounds/optimise.py batches them (its L-BFGS, the same settings).
"""

from __future__ import annotations

import numpy as np
import torch

from entropic_bound.bounds.optimise import BoundSettings, Problem, _as64, _optimise, start_factors
from entropic_bound.core.rungs import has_population  # noqa: F401  (re-exported)
from entropic_bound.tasks.mixing import static_mixing


def population_risk(M: torch.Tensor, M_student: torch.Tensor) -> torch.Tensor:
    """R(M') = 1 − ⟨M, M'⟩² / (‖M‖² ‖M'‖²) over the last two axes: [...]."""
    inner = (M * M_student).sum(dim=(-2, -1))
    norms = M.pow(2).sum(dim=(-2, -1)) * M_student.pow(2).sum(dim=(-2, -1))
    return 1.0 - inner.pow(2) / norms


class _Population:
    """A chunk of population problems of one rung: factors Q, K [P, k, width] (masked to each
    problem's rank), the teacher's mixing M [P, n, n]; the interface of optimise.py's batch
    (``params``, ``risks``, ``Q``, ``grad_norms``) so that its L-BFGS runs it."""

    def __init__(self, tasks, problems: list[Problem]):
        meta = tasks[problems[0].task][1]
        self.rung, self.beta = meta["class"], float(meta["beta"])
        self.n, self.d = int(meta["n"]), int(meta["d"])
        width = max(p.rank for p in problems)
        arrays = [tasks[p.task][0] for p in problems]
        self.P = torch.stack([_as64(a["P"]) for a in arrays])  # [P, n, d]
        teacher = torch.stack([_as64(a["kernel"]) for a in arrays])
        self.M = self.mixing(teacher)
        QK = [start_factors(a["kernel"], p, width) for a, p in zip(arrays, problems)]
        self.Q = torch.stack([q for q, _ in QK]).requires_grad_(True)
        self.K = torch.stack([k for _, k in QK]).requires_grad_(True)
        cols = torch.arange(width)
        self.mask = (cols[None, :] < torch.tensor([p.rank for p in problems])[:, None]).double()

    def mixing(self, kernel: torch.Tensor) -> torch.Tensor:
        return static_mixing(self.rung, kernel, n=self.n, d=self.d, beta=self.beta, P=self.P)

    def params(self) -> list[torch.Tensor]:
        return [self.Q, self.K]

    def risks(self) -> torch.Tensor:
        Qm = self.Q * self.mask[:, None, :]
        return population_risk(self.M, self.mixing(Qm @ self.K.transpose(-1, -2)))

    def grad_norms(self) -> np.ndarray:
        grads = torch.autograd.grad(self.risks().sum(), self.params())
        return sum((g * g).flatten(1).sum(1) for g in grads).sqrt().detach().numpy()


def population_bounds(tasks, problems: list[Problem], s: BoundSettings) -> list[dict]:
    """Rows (task index, rank, R, grad_norm, iterations) of every problem, in order: the
    population risk of each problem's best iterate (``s.max_iter``, ``s.grad_tol``, ``s.chunk``; its
    ``n_seqs`` unused: no sample). ``tasks``: (arrays, meta) of one static rung."""
    rows = []
    for start in range(0, len(problems), s.chunk):
        chunk = problems[start : start + s.chunk]
        batch = _Population(tasks, chunk)
        # each problem at its best iterate: the chunk shares L-BFGS's steps
        iters, gnorm = (
            _optimise(batch, s, keep_best=True) if s.max_iter else (0, batch.grad_norms())
        )
        with torch.no_grad():
            risk = batch.risks().numpy()
        for p, r, g in zip(chunk, risk, gnorm):
            rows.append(
                {"task": p.task, "rank": p.rank, "R": float(r), "grad_norm": float(g)}
                | {"iterations": iters}
            )
    return rows
