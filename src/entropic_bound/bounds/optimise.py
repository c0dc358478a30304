"""The class bound R*_c(r): the least relative excess risk of a rank-r model of class c on a task
(docs/method.md §5b, "Class bounds").

* L0 (the static linear surrogate): exact, the Eckart–Young tail of the teacher's kernel
  spectrum, R*(r) = Σ_{k>r} s_k² / Σ s_k² (V free absorbs everything else):
  ``stage.tail_energy``, torch-free, so that the L0 job never imports torch.
* Every other class: no closed form. The best rank-r kernel is found by direct optimisation of
  the large-sample loss, started from the teacher's truncated SVD (Q = U_r S_r^½, K = W_r S_r^½)
  and the teacher's value map, by L-BFGS in float64 until the gradient norm of R with respect to
  the model's parameters is below ``grad_tol`` (or ``max_iter`` is spent). The result is an
  upper bound on the optimum; its residual (the final gradient norm) is reported beside it.

Problems of one rung are solved together: ``P`` problems (task × rank) share one parameter
vector and one objective, the sum of their risks, which is separable, so each problem's
gradient is its own. Ranks are padded to the largest and masked.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import numpy as np
import torch

from entropic_bound.core.rungs import parse_rung
from entropic_bound.tasks.mixing import apply_operator


@dataclass(frozen=True)
class BoundSettings:
    """How a non-L0 bound is optimised (config ``bounds``)."""

    n_seqs: int | None = 1024  # training sequences of the large-sample loss (None: all)
    max_iter: int = 200  # L-BFGS iterations
    grad_tol: float = 1e-7  # stop when every problem's ‖∇R‖ is below this
    chunk: int = 16  # problems optimised together (memory: chunk × n_seqs × n × d floats)


@dataclass(frozen=True)
class Start:
    """Where L-BFGS starts a problem: factors ``Q, K`` [k, rank] and, optionally, the value map
    ``V`` [d, d] (None: the teacher's). Registered starts: bounds/starts.py."""

    Q: np.ndarray
    K: np.ndarray
    V: np.ndarray | None = None


@dataclass
class Problem:
    """One (task, rank) problem: the task's training/test data and teacher, the rank, and where it
    starts (None: the teacher's truncated SVD and value map, registration v2's start)."""

    task: int  # index into the task list
    rank: int
    start: Start | None = None


def _factors(kernel: torch.Tensor, rank: int, width: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Q, K [k, width] from the kernel's rank-``rank`` truncated SVD (columns beyond it zero)."""
    U, s, Wt = torch.linalg.svd(kernel)
    root = s[:rank].sqrt()
    Q = torch.zeros(kernel.shape[0], width, dtype=torch.float64)
    K = torch.zeros_like(Q)
    Q[:, :rank] = U[:, :rank] * root
    K[:, :rank] = Wt[:rank].T * root
    return Q, K


def _as64(a) -> torch.Tensor:
    return torch.as_tensor(np.asarray(a), dtype=torch.float64)


def start_factors(kernel, p: Problem, width: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Q, K [k, width] where problem ``p`` starts (columns beyond its rank zero): its
    :class:`Start`'s, or the teacher ``kernel``'s truncated SVD."""
    if p.start is None:
        return _factors(_as64(kernel), p.rank, width)
    Q = torch.zeros(kernel.shape[0], width, dtype=torch.float64)
    K = torch.zeros_like(Q)
    Q[:, : p.rank] = _as64(p.start.Q)[:, : p.rank]
    K[:, : p.rank] = _as64(p.start.K)[:, : p.rank]
    return Q, K


class _Batch:
    """A chunk of problems of one rung as stacked tensors, and their risk (on the first
    ``n_seqs`` training sequences; None: all of them)."""

    def __init__(self, tasks, problems: list[Problem], n_seqs: int | None):
        metas = [tasks[p.task][1] for p in problems]
        self.rung, self.beta = metas[0]["class"], float(metas[0]["beta"])
        width = max(p.rank for p in problems)
        arrays = [tasks[p.task][0] for p in problems]
        as64 = _as64
        self._data(tasks, problems, n_seqs)
        self.P = torch.stack([as64(a["P"]) for a in arrays])[:, None]  # [P, 1, n, d]
        QK = [start_factors(a["kernel"], p, width) for a, p in zip(arrays, problems)]
        self.Q = torch.stack([q for q, _ in QK]).requires_grad_(True)  # [P, k, width]
        self.K = torch.stack([k for _, k in QK]).requires_grad_(True)
        V = [a["V"] if p.start is None or p.start.V is None else p.start.V for a, p in zip(arrays, problems)]  # fmt: skip
        self.V = torch.stack([as64(v) for v in V]).requires_grad_(True)  # [P, d, d]
        cols = torch.arange(width)
        self.mask = (cols[None, :] < torch.tensor([p.rank for p in problems])[:, None]).double()

    def _data(self, tasks, problems: list[Problem], n_seqs: int | None) -> None:
        """The training sample: X, Y [P, B, n, d] and mean Y² [P]."""
        arrays = [tasks[p.task][0] for p in problems]
        self.X = torch.stack([_as64(a["X_train"][:n_seqs]) for a in arrays])  # [P, B, n, d]
        self.Y = torch.stack([_as64(a["Y_train"][:n_seqs]) for a in arrays])
        self.power = self.Y.pow(2).mean(dim=(1, 2, 3))  # [P]

    def params(self) -> list[torch.Tensor]:
        return [self.Q, self.K, self.V]

    def kernel(self) -> torch.Tensor:
        Qm = self.Q * self.mask[:, None, :]
        return (Qm @ self.K.transpose(-1, -2))[:, None]  # [P, 1, k, k]

    def predict(self, X: torch.Tensor) -> torch.Tensor:
        P = self.P if parse_rung(self.rung)[0] in ("L2", "Lam") else None
        return apply_operator(self.rung, X, self.kernel(), self.V[:, None], beta=self.beta, P=P)

    def risks(self) -> torch.Tensor:
        """R of every problem on its training sample: [P]."""
        return (self.predict(self.X) - self.Y).pow(2).mean(dim=(1, 2, 3)) / self.power

    def grad_norms(self) -> np.ndarray:
        """‖∇R_p‖ over problem p's own parameters (the objective is separable)."""
        total = self.risks().sum()
        grads = torch.autograd.grad(total, self.params())
        sq = sum((g * g).flatten(1).sum(1) for g in grads)
        return sq.sqrt().detach().numpy()


#: the cache attribute of ``torch._disable_dynamo``'s wrapper (torch/_compile.py)
_DYNAMO_CACHE = "__dynamo_disable"


@contextlib.contextmanager
def _no_dynamo_import():
    """torch.optim wraps ``Optimizer.add_param_group`` and ``zero_grad`` in
    ``torch._disable_dynamo``, whose first call imports torch._dynamo (sympy with it: ~1 CPU s,
    a quarter of a bounds job) to build a wrapper that matters only under torch.compile. The
    wrapper caches what it builds on the wrapped function; caching the function itself there,
    for the duration, makes each call a plain call and the import never happens. Nothing is
    computed differently (the wrapper never touches the arguments); the caches are removed on
    exit. Should a torch release rename the cache, the import simply happens again."""
    seeded = []
    for name in ("add_param_group", "zero_grad"):
        fn = getattr(getattr(torch.optim.Optimizer, name), "__wrapped__", None)
        if fn is not None and not hasattr(fn, _DYNAMO_CACHE):
            setattr(fn, _DYNAMO_CACHE, fn)
            seeded.append(fn)
    try:
        yield
    finally:
        for fn in seeded:
            if getattr(fn, _DYNAMO_CACHE, None) is fn:
                delattr(fn, _DYNAMO_CACHE)


class BestIterate:
    """Each problem's least risk over every evaluation of an optimisation, and its parameters.

    The problems of a chunk share L-BFGS's scalars (its line search and curvature pairs), so a
    problem that starts at its optimum may be moved off it by the others' steps; the best-known
    bounds keep each problem's best iterate (by the objective, never the test set)."""

    def __init__(self, params: list[torch.Tensor]):
        self.risk = torch.full((params[0].shape[0],), float("inf"), dtype=torch.float64)
        self.params = [p.detach().clone() for p in params]

    def update(self, risks: torch.Tensor, params: list[torch.Tensor]) -> None:
        with torch.no_grad():
            better = risks.detach() < self.risk  # NaN is never better
            if bool(better.any()):
                self.risk = torch.where(better, risks.detach(), self.risk)
                for kept, p in zip(self.params, params):
                    kept[better] = p.detach()[better]

    def restore(self, params: list[torch.Tensor]) -> None:
        with torch.no_grad():
            for kept, p in zip(self.params, params):
                p.copy_(kept)


def _optimise(batch, s: BoundSettings, keep_best: bool = False) -> tuple[int, np.ndarray]:
    """L-BFGS on the summed risk; returns (iterations, final gradient norms [P]). ``keep_best``:
    each problem ends at its best iterate (:class:`BestIterate`), not at L-BFGS's last."""
    best = BestIterate(batch.params()) if keep_best else None
    with _no_dynamo_import():
        iters = _lbfgs(batch, s, best)
    if best is not None:
        best.restore(batch.params())
    return iters, batch.grad_norms()


def _lbfgs(batch, s: BoundSettings, best: BestIterate | None = None) -> int:
    opt = torch.optim.LBFGS(
        batch.params(),
        lr=1.0,
        max_iter=s.max_iter,
        tolerance_grad=s.grad_tol,  # on the largest |gradient entry|, hence below every norm
        tolerance_change=0.0,
        history_size=20,
        line_search_fn="strong_wolfe",
    )

    def closure():
        opt.zero_grad()
        risks = batch.risks()
        if best is not None:
            best.update(risks, batch.params())
        loss = risks.sum()
        loss.backward()
        return loss

    opt.step(closure)
    return int(opt.state[batch.Q].get("n_iter", 0))


def test_risk(batch: _Batch, tasks, problems: list[Problem]) -> np.ndarray:
    """R of every optimised problem on its task's test set (as the students are scored)."""
    out = np.empty(len(problems))
    with torch.no_grad():
        for i, p in enumerate(problems):
            arrays, meta = tasks[p.task]
            X = torch.as_tensor(arrays["X_test"], dtype=torch.float64)
            Y = torch.as_tensor(arrays["Y_test"], dtype=torch.float64)
            one = _select(batch, i)
            mse = float((one.predict(X) - Y).pow(2).mean())
            out[i] = (mse - meta["sigma"] ** 2) / meta["test_clean_power"]
    return out


def _select(batch: _Batch, i: int) -> _Batch:
    """Problem ``i`` of a batch as a batch of one (parameters detached)."""
    one = object.__new__(_Batch)
    one.rung, one.beta = batch.rung, batch.beta
    one.P = batch.P[i : i + 1]
    one.Q, one.K, one.V = (t[i : i + 1].detach() for t in batch.params())
    one.mask = batch.mask[i : i + 1]
    return one


def optimised_bounds(
    tasks,
    problems: list[Problem],
    s: BoundSettings,
    progress=None,
    keep_best: bool = False,
    batch=None,
) -> list[dict]:
    """Rows (task index, rank, R_bound, grad_norm, iterations) of every problem, in order.

    ``tasks``: list of (arrays, meta) of one rung (``tasks.load_task``); ``progress(done, total)``
    after each chunk; ``s.n_seqs`` None: every training sequence; ``keep_best``: each problem
    scored at its best training-risk iterate (:class:`BestIterate`; registration v2's bounds
    take L-BFGS's last); ``batch``: the class of a chunk (default the batch here; a static
    rung's may take bounds/moments.py's, the same risks from the sample's moments)."""
    rows = []
    for start in range(0, len(problems), s.chunk):
        chunk = problems[start : start + s.chunk]
        one = (batch or _Batch)(tasks, chunk, s.n_seqs)
        iters, gnorm = _optimise(one, s, keep_best)
        risk = test_risk(one, tasks, chunk)
        for p, r, g in zip(chunk, risk, gnorm):
            rows.append(
                {"task": p.task, "rank": p.rank, "R_bound": float(r), "grad_norm": float(g)}
                | {"iterations": iters}
            )
        if progress is not None:
            progress(start + len(chunk), len(problems))
    return rows
