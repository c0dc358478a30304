"""The two ways the engine computes a training step, side by side, and its one Adam.

Every active student's parameters are one flat row of ``W: [S, 2·k·r_max + d·d]``: its factors
``Q, K: [k, r_max]`` (columns ≥ its rank stay exactly zero: their gradient dL/dA·K[:, j] is 0,
so Adam's moments and steps are 0 too) and its value map ``V: [d, d]``. A gradient function
writes each student's own minibatch gradient into ``G`` (same shape) and returns the
minibatch losses ``[S]``; the loss of the batch is the sum of per-student MSEs.

* ``fused`` (CPU): the C kernel of fused.py runs each student's forward and backward pass per
  sequence in cache; the chain from the operator's terms back to the factors is written out.
  A student of low rank on a large problem takes its bilinear term x Q Kᵀ xᵀ as
  (x Q)(x K)ᵀ (``train.products``, :func:`factored_ranks`).
* ``torch`` (any device): autograd over chunks of students.

The two agree to float32 rounding, not bitwise (tests).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from entropic_bound.tasks.mixing import (
    apply_operator,
    bilinear_coefficient,
    operator_terms,
    operator_terms_adjoint,
)
from entropic_bound.train import fused

ADAM_BETAS = (0.9, 0.999)
ADAM_EPS = 1e-8

PRODUCTS = ("auto", "dense", "factored")
#: ``train.products: auto`` keeps the dense products (A = Q Kᵀ formed) up to this n·d: the
#: paper tables were made with them, and at d = 16 the factored form saves little
DENSE_PRODUCTS_MAX_ND = 256
#: above it, ``auto`` factors the bilinear term of students of rank r ≤ d · this: at n = d = 64
#: (one thread) a whole step measured 1.42x faster at r = 1, 1.26x at 8, 1.19x at 16
#: (benchmarks/bench_train.py --products dense,factored: the two alternated, medians)
FACTORED_MAX_RANK_FRACTION = 0.25


def factored_ranks(rank, student_class: str, n: int, d: int, products: str) -> np.ndarray:
    """Per student (``rank``: its rank), the rank with which the fused kernel takes its
    bilinear term factored, or 0 for the dense products (always 0 for the rungs without one).

    ``products``: ``dense`` (never), ``factored`` (always) or ``auto`` (rank ≤ d/4 where
    n·d > DENSE_PRODUCTS_MAX_ND). The two forms agree to float32 rounding, not bitwise.
    """
    if products not in PRODUCTS:
        raise ValueError(f"unknown train.products {products!r}; use one of {', '.join(PRODUCTS)}")
    rank = np.asarray(rank, dtype=np.int64)
    use = np.full(rank.shape, products == "factored")
    if products == "auto" and n * d > DENSE_PRODUCTS_MAX_ND:
        use = rank <= FACTORED_MAX_RANK_FRACTION * d
    if not bilinear_coefficient(student_class, n=n, d=d):
        use[:] = False
    return np.where(use, rank, 0)


def _factors(cls: str, n: int, d: int, beta: float, rank, Q, K):
    """(``factors`` for fused.fused_step or None, c): A = c Q Kᵀ taken as (c Q) Kᵀ by the
    students with ``rank`` > 0 (None when there are none)."""
    c = bilinear_coefficient(cls, n=n, d=d, beta=beta)
    if rank is None or not bool(rank.any()):
        return None, c
    return (rank, c * Q, K), c


@dataclass(frozen=True)
class Shapes:
    """Sizes of one training job: kernel side k, largest rank, token dimension d, tokens n."""

    k: int
    rmax: int
    d: int
    n: int

    def unpack(self, w: torch.Tensor):
        """Views ``Q, K: [S, k, rmax]`` and ``V: [S, d, d]`` of flat parameter rows ``w``."""
        kr = self.k * self.rmax
        return (
            w[:, :kr].view(-1, self.k, self.rmax),
            w[:, kr : 2 * kr].view(-1, self.k, self.rmax),
            w[:, 2 * kr :].view(-1, self.d, self.d),
        )

    def kernel(self, w: torch.Tensor) -> torch.Tensor:
        """The learned kernels ``Q Kᵀ: [S, k, k]``."""
        q, kk, _ = self.unpack(w)
        return q @ kk.transpose(-1, -2)


@dataclass(frozen=True)
class Problem:
    """What a step needs besides the parameters: the class, the data, the shapes.

    ``X, Y: [T·N, n, d]`` every task's training sequences in one flat array (task t's sequences
    at rows t·N … t·N + N − 1); ``P: [T, n, d]`` positional embeddings; ``batch``: minibatch size;
    ``factored``: per layout row, :func:`factored_ranks` (None where no student has one).
    """

    student_class: str
    X: torch.Tensor
    Y: torch.Tensor
    P: torch.Tensor
    beta: float
    shapes: Shapes
    batch: int
    chunk: int
    factored: torch.Tensor | None = None


def grad_fused(prob: Problem, W, G, rows, task, ids) -> torch.Tensor:
    """Losses [S] of every student's minibatch (``rows: [S, B]`` into X; ``task``, ``ids``:
    each student's task and layout row), gradients into G.

    The kernel differentiates the loss with respect to the operator's terms (A, bias, V); the
    chain back to the factors is written out: kernel = Q Kᵀ, so dQ = dkernel K, dK = dkernelᵀ Q.
    A factored student (A = c Q Kᵀ taken as (c Q) Kᵀ) gets dA K and dAᵀ (c Q) from the kernel.
    """
    sh, cls = prob.shapes, prob.student_class
    P = prob.P[task]
    Q, K, V = sh.unpack(W)
    A, bias, softmax = operator_terms(
        cls, Q @ K.transpose(-1, -2), n=sh.n, d=sh.d, beta=prob.beta, P=P
    )
    rank = None if prob.factored is None else prob.factored[ids]
    factors, c = _factors(cls, sh.n, sh.d, prob.beta, rank, Q, K)
    step = fused.fused_step(prob.X, prob.Y, rows, A, bias, V, softmax, factors=factors)
    dkernel = operator_terms_adjoint(cls, step.dA, step.dbias, n=sh.n, d=sh.d, beta=prob.beta, P=P)
    dQ, dK, dVv = sh.unpack(G)
    dQ.copy_(dkernel @ K)
    dK.copy_(dkernel.transpose(-1, -2) @ Q)
    if factors is not None:  # dA is 0 for the factored students: their terms come from here
        dQ.add_(step.dQa, alpha=c)
        dK.add_(step.dKa)
    dVv.copy_(step.dV)
    return step.loss.to(W.dtype)


def grad_torch(prob: Problem, W, G, rows, task, ids) -> torch.Tensor:
    """As :func:`grad_fused` with autograd, students in chunks of ``prob.chunk`` (small bmm
    batches stay in cache: measured 2x faster than all at once)."""
    sh, n, d = prob.shapes, prob.shapes.n, prob.shapes.d
    losses = []
    for lo in range(0, W.shape[0], prob.chunk):
        sl = slice(lo, lo + prob.chunk)
        Wc = W[sl].detach().requires_grad_(True)
        Qa, Ka, Va = sh.unpack(Wc)
        r = rows[sl].reshape(-1)
        Xb = prob.X.index_select(0, r).view(-1, prob.batch, n, d)
        Yb = prob.Y.index_select(0, r).view(-1, prob.batch, n, d)
        A = (Qa @ Ka.transpose(-1, -2))[:, None]
        pred = apply_operator(
            prob.student_class, Xb, A, Va[:, None], beta=prob.beta, P=prob.P[task[sl]][:, None]
        )
        with torch.no_grad():
            diff = pred - Yb
            loss = diff.pow(2).mean((1, 2, 3))
        losses.append(loss)
        if not bool(torch.isfinite(loss).all()):
            break  # the engine reports the diverged student; no gradient needed
        # d(Σ_s loss_s)/d pred = 2·diff / (B·n·d): hand it to autograd directly
        (G[sl],) = torch.autograd.grad(pred, [Wc], grad_outputs=diff.mul_(2.0 / diff[0].numel()))
    loss = torch.cat(losses)
    if loss.numel() < W.shape[0]:  # stopped early on a non-finite chunk
        loss = torch.cat([loss, loss.new_full((W.shape[0] - loss.numel(),), float("nan"))])
    return loss


GRADIENTS = {"fused": grad_fused, "torch": grad_torch}


def adam_step(backend: str, W, G, m1, m2, lr, step: int) -> None:
    """One Adam update (step counted from 0) of every row of W in place; ``lr: [S]``.

    The fused backend runs it in one pass in C; the torch version makes seven passes.
    """
    b1, b2 = ADAM_BETAS
    c1, c2 = 1 - b1 ** (step + 1), 1 - b2 ** (step + 1)
    if backend == "fused":
        fused.adam_step(W, G, m1, m2, lr, b1, b2, c1, c2, ADAM_EPS)
        return
    with torch.no_grad():
        m1.mul_(b1).add_(G, alpha=1 - b1)
        m2.mul_(b2).addcmul_(G, G, value=1 - b2)
        W -= lr.view(-1, 1) * (m1 / c1) / ((m2 / c2).sqrt() + ADAM_EPS)


#: on CPU, the final evaluation takes as many sequences at a time as keep one intermediate of
#: all its students ([S, chunk, n, max(n, d)] float32) within about 4 MB, a cache-sized block:
#: measured at d = n = 64 with 12 students, 8 sequences at a time evaluate 3-4x faster than 256
EVAL_CPU_ELEMENTS = 2**20
#: on a GPU, large blocks (the default chunk below) keep it busy
EVAL_GPU_CHUNK = 256


def evaluate_torch(student_class, X, Y, A, V, beta, P, chunk: int | None = None) -> torch.Tensor:
    """Per-student MSE over a whole split. X, Y: [S, N, n, d] views; A, V: [S, k, k], [S, d, d].

    ``chunk`` sequences at a time (default: EVAL_GPU_CHUNK on a GPU, a cache-sized block on CPU);
    the per-sequence sums are added in float64."""
    total = torch.zeros(A.shape[0], dtype=torch.float64, device=A.device)
    S, N, n, d = X.shape
    if chunk is None:
        cpu = A.device.type == "cpu"
        chunk = max(1, EVAL_CPU_ELEMENTS // (S * n * max(n, d))) if cpu else EVAL_GPU_CHUNK
    for lo in range(0, N, chunk):
        pred = apply_operator(
            student_class, X[:, lo : lo + chunk], A[:, None], V[:, None], beta=beta, P=P
        )
        total += (pred - Y[:, lo : lo + chunk]).double().pow(2).sum((1, 2, 3))
    return total / (N * X.shape[2] * X.shape[3])


def evaluate_fused(student_class, X, Y, kernel, V, beta, P, factors=None) -> torch.Tensor:
    """Per-student MSE over a whole split (X, Y: [N, n, d] of one task) with the fused kernel;
    ``factors``: (factored rank [S], Q, K) with kernel = Q Kᵀ, as in training."""
    n, d = X.shape[-2:]
    A, bias, softmax = operator_terms(
        student_class, kernel, n=n, d=d, beta=beta, P=P.expand(len(kernel), n, d)
    )
    if factors is not None:
        factors, _ = _factors(student_class, n, d, beta, *factors)
    rows = torch.arange(len(X)).expand(len(kernel), len(X))
    return fused.fused_step(X, Y, rows, A, bias, V, softmax, factors=factors, backward=False).loss
