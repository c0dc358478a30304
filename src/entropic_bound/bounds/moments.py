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

Two routes, by n·d. Up to :data:`MOMENTS_EINSUM_MAX_ND` (the paper and quick configs, whose
tables they made, kept bitwise): the moments in one product over the whole sample in float64,
and each risk by ``torch.einsum``, which (without opt_einsum) forms the outer product
[P, n, n, d, d] of M' and V before it meets C. Above it: the sample read in chunks of rows (a
chunk in float64 at a time, not a float64 copy of the sample: 1 GB at d = n = 64, B = 16 384),
the moments kept in the layout of a matrix product, C as [(a, b), (j, m)] and G as
[(b, c), (j, l)], and each risk two products [P, n²] × [n², d²]: no [P, n², d²] intermediate.
At n = d = 48 one evaluation with its gradient took 1.9 s by einsum and 0.05 s by products
(one thread); the two agree to ~1e-14 relative (summation order). On the product route a
noise-free task (σ = 0) reads only G from its sample; C and mean ‖Y‖² come from G and its
teacher (:func:`teacher_moments`), a cost free of B.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from entropic_bound.bounds.optimise import Problem, _as64, _Batch
from entropic_bound.tasks.mixing import static_mixing

#: up to this n·d, the einsum route (module docstring); above it, the chunked moments and products
MOMENTS_EINSUM_MAX_ND = 256
#: rows of the sample per chunk of the product route's moments (16 MB of float64 at n·d = 2048)
MOMENT_CHUNK_ROWS = 1024


@dataclass
class SampleMoments:
    """A task's training-set moments: ``G``, ``C`` (the layout of ``route``'s risks: [n, d, n, d]
    for ``einsum``, [n², d²] for ``products``) and ``y2`` = mean ‖Y_i‖²."""

    G: torch.Tensor
    C: torch.Tensor
    y2: torch.Tensor
    route: str


def moments_route(n: int, d: int) -> str:
    """``einsum`` up to :data:`MOMENTS_EINSUM_MAX_ND`, else ``products``."""
    return "einsum" if n * d <= MOMENTS_EINSUM_MAX_ND else "products"


def sample_moments(X, Y) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(G [n, d, n, d], C [n, d, n, d], mean ‖Y_i‖²) of a sample X, Y [B, n, d], in one product."""
    B, n, d = X.shape
    Xf = _as64(X).reshape(B, n * d)
    Yf = _as64(Y).reshape(B, n * d)
    G = (Xf.T @ Xf / B).view(n, d, n, d)
    C = (Xf.T @ Yf / B).view(n, d, n, d)
    return G, C, Yf.pow(2).sum(1).mean()


def _chunked_products(X, Y, rows: int):
    """(Σ xᵀx, Σ xᵀy or None, Σ ‖y‖² or None) / B over x = vec(X_i), y = vec(Y_i) ([n·d, n·d] in
    float64), read ``rows`` sequences at a time, each chunk widened to float64; Y None: G alone."""
    B, n, d = X.shape
    G = torch.zeros(n * d, n * d, dtype=torch.float64)
    C = torch.zeros_like(G) if Y is not None else None
    y2 = torch.zeros((), dtype=torch.float64)
    for lo in range(0, B, rows):
        x = _as64(X[lo : lo + rows]).reshape(-1, n * d)
        G.addmm_(x.T, x)
        if Y is not None:
            y = _as64(Y[lo : lo + rows]).reshape(-1, n * d)
            C.addmm_(x.T, y)
            y2 += y.pow(2).sum()
    if Y is None:
        return G.div_(B), None, None
    return G.div_(B), C.div_(B), y2 / B


def _product_layout(G, C, y2, n: int, d: int) -> SampleMoments:
    """The product route's SampleMoments of G, C [n·d, n·d] as (b, j) × (c, l) and (b, j) × (a, m):
    G as [(b, c), (j, l)], C as [(a, b), (j, m)]."""
    G = G.view(n, d, n, d).permute(0, 2, 1, 3).reshape(n * n, d * d)
    C = C.view(n, d, n, d).permute(2, 0, 1, 3).reshape(n * n, d * d)
    return SampleMoments(G, C, y2, "products")


def chunked_moments(X, Y, rows: int = MOMENT_CHUNK_ROWS) -> SampleMoments:
    """The product route's moments of X, Y [B, n, d] (any float dtype; read ``rows`` sequences at a
    time, each chunk widened to float64): G as [(b, c), (j, l)], C as [(a, b), (j, m)]."""
    n, d = X.shape[1:]
    return _product_layout(*_chunked_products(X, Y, rows), n, d)


def teacher_moments(
    X, M, V, rows: int = MOMENT_CHUNK_ROWS, gram=None, sequences: int | None = None
) -> SampleMoments:
    """The product route's moments of a noise-free static task, Y_i = M X_i V, from X alone: G as
    :func:`chunked_moments` makes it, and from G and the teacher (M [n, n], V [d, d])

        C[b, j, a, m] = Σ_c M[a, c] (Σ_l G[b, j, c, l] V[l, m]),
        mean ‖Y_i‖² = Σ M[a, b] V[j, m] C[b, j, a, m],

    2·n²d²(n + d) multiply-adds in place of the B·n²d² of the sample's X ᵀY. M and V are the
    task file's teacher (float32, widened), so these are the moments of the sample's targets to
    float32 precision, as the stored Y is (docs/method.md §5b).

    ``gram``: Σ xᵀx of this X as P_static formed it (tasks/files.py's ``write_gram``, written by predict), in place
    of the chunked sum: one product over the sample and the chunks' products summed in order are
    the same floats (BLAS sums a product's terms in order into its output;
    tests/bounds/test_moments_from_predict.py), so G is bitwise the one made here. With ``gram``,
    X is read for its shape alone and ``sequences`` (default: X's) is the number ``gram`` sums:
    the caller need not make the sample (bounds/best.py makes one sequence of it)."""
    n, d = X.shape[1:]
    if gram is None:
        G, _, _ = _chunked_products(X, None, rows)
    else:
        G = _as64(gram).clone().div_(X.shape[0] if sequences is None else sequences)
    M, V = _as64(M), _as64(V)
    C = M @ (G.view(n, d, n, d) @ V)  # [b, j, a, m]
    y2 = (M.T[:, None, :, None] * V[None, :, None, :] * C).sum()
    return _product_layout(G, C.reshape(n * d, n * d), y2, n, d)


def task_moments(
    arrays: dict, meta: dict | None = None, gram=None, sequences: int | None = None
) -> SampleMoments:
    """The moments of a task's whole training split (``X_train``, ``Y_train``), by its route; on
    the product route, a task at σ = 0 whose ``meta`` is given (its rung, β, σ) has C and mean
    ‖Y‖² from its teacher (:func:`teacher_moments`: ``kernel``, ``V``, ``P`` of ``arrays``; G
    from ``gram``, Σ xᵀx of its X over ``sequences`` of them, when given)."""
    X, Y = arrays["X_train"], arrays["Y_train"]
    if moments_route(X.shape[1], X.shape[2]) == "einsum":
        return SampleMoments(*sample_moments(X, Y), "einsum")
    if meta is not None and float(meta["sigma"]) == 0.0:
        n, d = X.shape[1:]
        kernel, P = (_as64(arrays[k]) if k in arrays else None for k in ("kernel", "P"))
        M = static_mixing(meta["class"], kernel, n=n, d=d, beta=float(meta["beta"]), P=P)
        if gram is None:
            return teacher_moments(X, M, arrays["V"])
        return teacher_moments(X, M, arrays["V"], gram=gram, sequences=sequences)
    return chunked_moments(X, Y)


def with_moments(
    arrays: dict, meta: dict | None = None, gram=None, sequences: int | None = None
) -> dict:
    """A task's arrays with its training split replaced by its moments (``moments``,
    :func:`task_moments`): what the moment batch reads, without the sample (a best-bounds job
    then holds one task's data at a time, not a rung's)."""
    out = {k: v for k, v in arrays.items() if k not in ("X_train", "Y_train")}
    out["moments"] = task_moments(arrays, meta, gram, sequences)
    return out


class MomentBatch(_Batch):
    """optimise.py's batch for a static rung, its training risk from the training set's moments
    (one set per task, shared by that task's problems: a task's ``moments`` when its arrays hold
    them (:func:`with_moments`) and every sequence is read, else made here from its first
    ``n_seqs`` training sequences)."""

    def _data(self, tasks, problems: list[Problem], n_seqs: int | None) -> None:
        self.moments: dict[int, SampleMoments] = {}
        for p in problems:
            if p.task not in self.moments:
                a = tasks[p.task][0]
                if "moments" in a and n_seqs is None:  # the whole split's, made once (best.py)
                    self.moments[p.task] = a["moments"]
                else:
                    part = {k: a[k][:n_seqs] for k in ("X_train", "Y_train")}
                    self.moments[p.task] = task_moments(part)
        which = [p.task for p in problems]
        #: (task, its problems' rows): the problems of one task share its moments
        self.groups = [
            (t, torch.tensor([i for i, u in enumerate(which) if u == t])) for t in self.moments
        ]
        meta = tasks[problems[0].task][1]
        self.n, self.d = int(meta["n"]), int(meta["d"])
        # mean Y² over the sample's entries, as the batch's risk is normalised
        self.power = torch.stack([self.moments[t].y2 for t in which]) / (self.n * self.d)

    def risks(self) -> torch.Tensor:
        Qm = self.Q * self.mask[:, None, :]
        kernel = Qm @ self.K.transpose(-1, -2)
        M = static_mixing(self.rung, kernel, n=self.n, d=self.d, beta=self.beta, P=self.P[:, 0])
        MtM = M.transpose(-1, -2) @ M
        VVt = self.V @ self.V.transpose(-1, -2)
        mse = torch.zeros(len(M), dtype=torch.float64)
        for t, rows in self.groups:
            m = self.moments[t]
            if m.route == "einsum":
                cross = torch.einsum("pab,pjm,bjam->p", M[rows], self.V[rows], m.C)
                quad = torch.einsum("pbc,pjl,bjcl->p", MtM[rows], VVt[rows], m.G)
            else:  # [P, n²] @ [n², d²], then the inner product with V (V Vᵀ) per problem
                cross = ((M[rows].flatten(1) @ m.C) * self.V[rows].flatten(1)).sum(1)
                quad = ((MtM[rows].flatten(1) @ m.G) * VVt[rows].flatten(1)).sum(1)
            mse = mse.index_put((rows,), (m.y2 - 2 * cross + quad) / (self.n * self.d))
        return mse / self.power
