"""The training risk of a static-mixing student from the training set's second moments
(docs/method.md §5b, "Best-known bounds"): exact on the sample, at a cost free of its size.

For a rung whose mixing ignores the input (L0, L1, L2: M' = act(bias)), a student predicts
M' X V, and its mean squared error over the training set is a quadratic form in (M', V) whose
coefficients are two moments of the sample, computed once per task:

    G[b, j, c, l] = mean_i X_i[b, j] X_i[c, l],   C[b, j, a, m] = mean_i X_i[b, j] Y_i[a, m],

    mean_i ‖Y_i − M' X_i V‖² = mean_i ‖Y_i‖² − 2 Σ M'[a, b] V[j, m] C[b, j, a, m]
                               + Σ (M'ᵀ M')[b, c] (V Vᵀ)[j, l] G[b, j, c, l].

Each evaluation costs O(n² d²) per problem instead of O(B n d (n + d)), so L-BFGS on every
training sequence (the students' own set) is as cheap as on a handful. The batch is
bounds/optimise.py's, with these risks; the test split is scored as there.
"""

from __future__ import annotations

import torch

from entropic_bound.bounds.optimise import Problem, _as64, _Batch
from entropic_bound.tasks.mixing import static_mixing


def sample_moments(X, Y) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(G [n, d, n, d], C [n, d, n, d], mean ‖Y_i‖²) of a sample X, Y [B, n, d]."""
    B, n, d = X.shape
    Xf = _as64(X).reshape(B, n * d)
    Yf = _as64(Y).reshape(B, n * d)
    G = (Xf.T @ Xf / B).view(n, d, n, d)
    C = (Xf.T @ Yf / B).view(n, d, n, d)
    return G, C, Yf.pow(2).sum(1).mean()


class MomentBatch(_Batch):
    """optimise.py's batch for a static rung, its training risk from :func:`sample_moments`
    (one set per task, shared by that task's problems)."""

    def _data(self, tasks, problems: list[Problem], n_seqs: int | None) -> None:
        self.moments = {}
        for p in problems:
            if p.task not in self.moments:
                a = tasks[p.task][0]
                self.moments[p.task] = sample_moments(a["X_train"][:n_seqs], a["Y_train"][:n_seqs])
        which = [p.task for p in problems]
        #: (task, its problems' rows): the problems of one task share its moments
        self.groups = [
            (t, torch.tensor([i for i, u in enumerate(which) if u == t])) for t in self.moments
        ]
        meta = tasks[problems[0].task][1]
        self.n, self.d = int(meta["n"]), int(meta["d"])
        # mean Y² over the sample's entries, as the batch's risk is normalised
        self.power = torch.stack([self.moments[t][2] for t in which]) / (self.n * self.d)

    def risks(self) -> torch.Tensor:
        Qm = self.Q * self.mask[:, None, :]
        kernel = Qm @ self.K.transpose(-1, -2)
        M = static_mixing(self.rung, kernel, n=self.n, d=self.d, beta=self.beta, P=self.P[:, 0])
        MtM = M.transpose(-1, -2) @ M
        VVt = self.V @ self.V.transpose(-1, -2)
        mse = torch.zeros(len(M), dtype=torch.float64)
        for t, rows in self.groups:
            G, C, y2 = self.moments[t]
            cross = torch.einsum("pab,pjm,bjam->p", M[rows], self.V[rows], C)
            quad = torch.einsum("pbc,pjl,bjcl->p", MtM[rows], VVt[rows], G)
            mse = mse.index_put((rows,), (y2 - 2 * cross + quad) / (self.n * self.d))
        return mse / self.power
