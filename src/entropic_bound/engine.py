"""The batched rank-sweep training engine (SCIENCE.md §4).

One tensor program trains every student of one class on a set of tasks of equal shape:
students are laid out along a flat axis S = tasks × student seeds × ranks, each with its own
factors ``Q, K: [S, k, r_max]`` (rank r by masking columns ≥ r), value map ``V: [S, d, d]``,
Adam state and learning rate. The loss is the sum of per-student MSEs, so every student's
gradient is its own. Students that converge (R ≤ converge_at·ε) or plateau (no relative
improvement of min_delta for `patience` evaluations at the lowest learning rate) are retired
and the batch is compacted, so a finished student stops costing compute.

Everything random is drawn per (task, student seed) stream, so a student's trajectory does
not depend on which other students share its batch (tests check this), and on CPU a fixed
config is bitwise reproducible.

Two backends compute a step: ``fused`` (CPU; the C kernel of fused.py does each student's
forward and backward pass per sequence in cache, and Adam in one pass) and ``torch``
(autograd over chunks of students; any device). See :func:`pick_backend`.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from . import fused
from .mixing import apply_operator, operator_terms, operator_terms_adjoint
from .rungs import kernel_dim, parse_rung
from .seeds import student_stream

ADAM_BETAS = (0.9, 0.999)
ADAM_EPS = 1e-8


@dataclass(frozen=True)
class Optim:
    lr: float = 2e-2
    batch: int = 128
    max_steps: int = 1500
    eval_every: int = 50
    patience: int = 2
    min_delta: float = 1e-3
    lr_decay: float = 0.3  # learning rate factor on a plateau ...
    lr_drops: int = 2  # ... applied this many times before the student is retired
    converge_at: float = 0.1  # retire once the windowed training R ≤ converge_at · ε
    chunk: int = 32  # students per forward/backward pass inside a step

    @classmethod
    def from_config(cls, d: dict) -> Optim:
        return cls(**{k: v for k, v in d.items() if k in cls.__dataclass_fields__})


def pick_device(name: str = "auto") -> torch.device:
    if name == "cuda" or (name == "auto" and torch.cuda.is_available()):
        if not torch.cuda.is_available():
            raise ValueError("config asks for device: cuda but no CUDA device is visible")
        return torch.device("cuda")
    return torch.device("cpu")


BACKENDS = ("auto", "fused", "torch")


def pick_backend(name: str, dev: torch.device) -> str:
    """``fused`` (the C kernel of fused.py, CPU only) or ``torch`` (autograd, any device).

    ``auto`` takes the fused kernel on CPU when it builds here, else torch. The two agree to
    float32 rounding (tests), not bitwise: the backend used is a column of the metrics table.
    """
    if name not in BACKENDS:
        raise ValueError(f"unknown training backend {name!r}; use one of {', '.join(BACKENDS)}")
    if name == "torch" or (name == "auto" and dev.type != "cpu"):
        return "torch"
    if dev.type != "cpu":
        raise ValueError(
            "train.backend: fused runs on the CPU only; use auto or torch with device: cuda"
        )
    if fused.available():
        return "fused"
    if name == "fused":
        try:
            fused.library()
        except RuntimeError as exc:  # a config the machine cannot run: one line, not a traceback
            raise ValueError(str(exc)) from None
    print(
        "entropic-bound: the fused CPU kernel did not build; training with the torch backend",
        file=sys.stderr,
    )
    return "torch"


def tail_energy(spectrum: np.ndarray, rank: int) -> float:
    """Eckart–Young population optimum of the surrogate: R*(r) = Σ_{k>r} s_k² / Σ s_k²."""
    e = np.asarray(spectrum, dtype=np.float64) ** 2
    return float(e[rank:].sum() / e.sum())


def train_students(
    tasks: list[tuple[dict, dict]],
    student_class: str,
    ranks: list[int],
    seeds: list[int],
    optim: Optim,
    *,
    init_scale: float = 1e-2,
    epsilon: float = 1e-3,
    checkpoints: int = 20,
    base_seed: int = 0,
    static_student: bool = False,
    device: str = "auto",
    backend: str = "auto",
) -> dict[str, pd.DataFrame]:
    """Train every (task, seed, rank) student of ``student_class`` in one batched program.

    ``tasks``: list of (arrays, meta) as returned by ``tasks.load_task`` (equal n, d, β).
    Returns DataFrames ``metrics`` (one row per student), ``dynamics`` (learned spectra at
    ~``checkpoints`` steps) and ``loss`` (windowed training loss every eval_every steps).
    """
    dev = pick_device(device)
    backend = pick_backend(backend, dev)
    # a guard (process-wide): subnormal floats, e.g. saturated softmax tails, are slow on x86.
    # On the paper workload it measured no difference, so results do not depend on it.
    torch.set_flush_denormal(True)
    metas = [m for _, m in tasks]
    n, d, beta = metas[0]["n"], metas[0]["d"], metas[0]["beta"]
    if any((m["n"], m["d"], m["beta"]) != (n, d, beta) for m in metas):
        raise ValueError("tasks trained together must share n, d and beta")
    k = kernel_dim(student_class, n, d)
    if not ranks or max(ranks) > k or min(ranks) < 1:
        raise ValueError(f"ranks must lie in 1..{k} for class {student_class}, got {ranks}")
    parse_rung(student_class)
    f32 = dict(dtype=torch.float32, device=dev)
    Xtr = torch.stack([torch.as_tensor(a["X_train"]) for a, _ in tasks]).to(**f32)
    Ytr = torch.stack([torch.as_tensor(a["Y_train"]) for a, _ in tasks]).to(**f32)
    P = torch.stack([torch.as_tensor(a["P"]) for a, _ in tasks]).to(**f32)
    T, N = Xtr.shape[:2]
    train_power = Ytr.pow(2).mean((1, 2, 3))

    # student layout: s = ((t * K) + seed_index) * R + rank_index
    K_ = len(seeds)
    grid = np.array([(t, j, r) for t in range(T) for j in range(K_) for r in ranks])
    task_of = torch.as_tensor(grid[:, 0], device=dev)
    stream_of = torch.as_tensor(grid[:, 0] * K_ + grid[:, 1], device=dev)
    rank_of = torch.as_tensor(grid[:, 2], device=dev)
    S, rmax = len(grid), max(ranks)

    # per-stream randomness: initial factors (nested across ranks) and minibatch indices
    Q0, K0, V0, idx = [], [], [], []
    for _t, m in enumerate(metas):
        for seed in seeds:
            g = student_stream(base_seed, m["task_id"], student_class, seed)
            # full k×k draws, sliced: a student's init does not depend on the other ranks
            Q0.append(torch.randn(k, k, generator=g)[:, :rmax])
            K0.append(torch.randn(k, k, generator=g)[:, :rmax])
            V0.append(torch.randn(d, d, generator=g))
            idx.append(torch.randint(N, (optim.max_steps, optim.batch), generator=g))
    s_stream = stream_of.cpu()
    mask = (torch.arange(rmax)[None, :] < rank_of.cpu()[:, None]).to(torch.float32)[:, None, :]
    # every student's Q, K (masked beyond its rank) and V in one flat row, so that Adam is one
    # fused update over the batch. Masked columns stay exactly zero without a mask in the
    # forward pass: their gradient is dL/dA·K[:, j] = 0, so Adam's moments and step are 0 too.
    kr = k * rmax
    W = torch.cat(
        [
            (torch.stack(Q0)[s_stream] * mask).reshape(S, kr),
            (torch.stack(K0)[s_stream] * mask).reshape(S, kr),
            torch.stack(V0)[s_stream].reshape(S, d * d),
        ],
        dim=1,
    )
    W = (W * init_scale).to(**f32).contiguous()
    batch_idx = torch.stack(idx).to(dev)  # [T*K, steps, B]

    def unpack(w):
        return (
            w[:, :kr].view(-1, k, rmax),
            w[:, kr : 2 * kr].view(-1, k, rmax),
            w[:, 2 * kr :].view(-1, d, d),
        )

    def kernel(w):
        q, kk, _ = unpack(w)
        return q @ kk.transpose(-1, -2)

    m1, m2, G = torch.zeros_like(W), torch.zeros_like(W), torch.zeros_like(W)
    lr = torch.full((S,), optim.lr, **f32)
    best = torch.full((S,), math.inf, **f32)
    bad = torch.zeros(S, dtype=torch.long, device=dev)
    drops = torch.zeros(S, dtype=torch.long, device=dev)
    window = torch.zeros(S, **f32)
    alive = torch.arange(S, device=dev)  # global ids of the active students
    final = W.clone()
    steps_run = torch.zeros(S, dtype=torch.long, device=dev)
    converged = torch.zeros(S, dtype=torch.bool, device=dev)
    ckpt_steps = set(
        np.unique(np.linspace(0, optim.max_steps, checkpoints).round().astype(int)).tolist()
    )
    dyn_rows: list[tuple[np.ndarray, int, np.ndarray]] = []
    loss_rows: list[tuple[np.ndarray, int, np.ndarray]] = []

    def record_spectra(step: int, ids, w) -> None:
        with torch.no_grad():
            sv = torch.linalg.svdvals(kernel(w).double())
        dyn_rows.append((ids.cpu().numpy(), step, sv.cpu().numpy()))

    b1, b2 = ADAM_BETAS
    Xflat, Yflat = Xtr.reshape(T * N, n, d), Ytr.reshape(T * N, n, d)
    chunk = max(1, optim.chunk)
    for step in range(optim.max_steps):
        if step in ckpt_steps:
            record_spectra(step, alive, W)
        rows = (task_of[alive] * N)[:, None] + batch_idx[stream_of[alive], step]  # [S_a, B]
        if backend == "fused":
            loss = _fused_grad(
                W, G, rows, unpack, student_class, Xflat, Yflat, n, d, beta, P[task_of[alive]]
            )
            _check_finite(loss, alive, grid, metas, seeds, student_class, step)
            window[alive] += loss
        else:
            # torch: students in chunks of ~32, small bmm batches stay in cache (measured 2x
            # faster than all at once)
            for lo in range(0, alive.numel(), chunk):
                sl = slice(lo, lo + chunk)
                Wc = W[sl].detach().requires_grad_(True)
                Qa, Ka, Va = unpack(Wc)
                r = rows[sl].reshape(-1)
                Xb = Xflat.index_select(0, r).view(-1, optim.batch, n, d)
                Yb = Yflat.index_select(0, r).view(-1, optim.batch, n, d)
                A = (Qa @ Ka.transpose(-1, -2))[:, None]
                pred = apply_operator(
                    student_class, Xb, A, Va[:, None], beta=beta, P=P[task_of[alive[sl]]][:, None]
                )
                with torch.no_grad():
                    diff = pred - Yb
                    loss = diff.pow(2).mean((1, 2, 3))
                _check_finite(loss, alive[sl], grid, metas, seeds, student_class, step)
                # d(Σ_s loss_s)/d pred = 2·diff / (B·n·d): hand it to autograd directly
                (G[sl],) = torch.autograd.grad(
                    pred, [Wc], grad_outputs=diff.mul_(2.0 / diff[0].numel())
                )
                window[alive[sl]] += loss
        c1, c2 = 1 - b1 ** (step + 1), 1 - b2 ** (step + 1)
        if backend == "fused":  # Adam in one pass (C); the torch version below makes seven
            fused.adam_step(W, G, m1, m2, lr[alive], b1, b2, c1, c2, ADAM_EPS)
        else:  # Adam, one update for every active student
            with torch.no_grad():
                m1.mul_(b1).add_(G, alpha=1 - b1)
                m2.mul_(b2).addcmul_(G, G, value=1 - b2)
                W -= lr[alive].view(-1, 1) * (m1 / c1) / ((m2 / c2).sqrt() + ADAM_EPS)
        if (step + 1) % optim.eval_every and step + 1 < optim.max_steps:
            continue
        # ---- evaluation: retire converged / plateaued students, compact the batch ----
        with torch.no_grad():
            w = window[alive] / optim.eval_every
            window.zero_()
            loss_rows.append((alive.cpu().numpy(), step + 1, w.cpu().numpy()))
            R_win = w / train_power[task_of[alive]]
            done_conv = R_win <= optim.converge_at * epsilon
            improved = w < best[alive] * (1 - optim.min_delta)
            best[alive] = torch.where(improved, w, best[alive])
            bad[alive] = torch.where(improved, 0, bad[alive] + 1)
            plateau = bad[alive] >= optim.patience
            drop = plateau & (drops[alive] < optim.lr_drops)
            lr[alive] = torch.where(drop, lr[alive] * optim.lr_decay, lr[alive])
            drops[alive] += drop.long()
            bad[alive] = torch.where(drop, 0, bad[alive])
            done = (
                done_conv
                | (plateau & ~drop)
                | torch.tensor(step + 1 >= optim.max_steps, device=dev)
            )
            converged[alive] = done_conv
            if bool(done.any()):
                gone = alive[done]
                final[gone] = W[done]
                steps_run[gone] = step + 1
                record_spectra(step + 1, gone, W[done])
                keep = ~done
                alive, W, m1, m2, G = alive[keep], W[keep], m1[keep], m2[keep], G[keep]
            if alive.numel() == 0:
                break

    Qf, Kf, Vf = unpack(final)
    metrics = _final_metrics(
        tasks,
        student_class,
        Qf @ Kf.transpose(-1, -2),
        Vf,
        task_of,
        grid,
        seeds,
        static_student,
        steps_run,
        converged,
        beta,
        P,
        dev,
        backend,
    )
    metrics["backend"] = backend
    return {
        "metrics": metrics,
        "dynamics": _long_rows(dyn_rows, metrics, "spectrum"),
        "loss": _long_rows(loss_rows, metrics, "train_loss"),
    }


def _check_finite(loss, ids, grid, metas, seeds, student_class, step) -> None:
    if bool(torch.isfinite(loss).all()):
        return
    t_, j_, r_ = grid[int(ids[~torch.isfinite(loss)][0])]
    raise ValueError(
        f"training of {student_class} diverged (non-finite loss) on task "
        f"{metas[t_]['task_id']}, rank {r_}, seed {seeds[j_]} at step {step + 1}; "
        f"lower train.classes.<class>.lr"
    )


def _fused_grad(W, G, rows, unpack, student_class, Xflat, Yflat, n, d, beta, P) -> torch.Tensor:
    """Every active student's minibatch loss, and its gradient written into G (fused kernel).

    The kernel differentiates the loss with respect to the operator's terms (A, bias, V); the
    chain back to the factors is written out: kernel = Q Kᵀ, so dQ = dkernel K, dK = dkernelᵀ Q
    (columns of Q, K beyond a student's rank stay zero: so do their gradients).
    """
    Q, K, V = unpack(W)
    A, bias, softmax = operator_terms(
        student_class, Q @ K.transpose(-1, -2), n=n, d=d, beta=beta, P=P
    )
    loss, dA, dbias, dV = fused.fused_step(Xflat, Yflat, rows, A, bias, V, softmax)
    dkernel = operator_terms_adjoint(student_class, dA, dbias, n=n, d=d, beta=beta, P=P)
    dQ, dK, dVv = unpack(G)
    dQ.copy_(dkernel @ K)
    dK.copy_(dkernel.transpose(-1, -2) @ Q)
    dVv.copy_(dV)
    return loss.to(W.dtype)


def _evaluate(student_class, X, Y, A, V, beta, P, chunk: int = 256) -> torch.Tensor:
    """Per-student MSE over a whole split. X, Y: [S, N, n, d] views; A, V: [S, k, k], [S, d, d]."""
    total = torch.zeros(A.shape[0], dtype=torch.float64, device=A.device)
    N = X.shape[1]
    for lo in range(0, N, chunk):
        pred = apply_operator(
            student_class, X[:, lo : lo + chunk], A[:, None], V[:, None], beta=beta, P=P
        )
        total += (pred - Y[:, lo : lo + chunk]).double().pow(2).sum((1, 2, 3))
    return total / (N * X.shape[2] * X.shape[3])


def _evaluate_fused(student_class, X, Y, kernel, V, beta, P) -> torch.Tensor:
    """Per-student MSE over a whole split (X, Y: [N, n, d] of one task) with the fused kernel."""
    n, d = X.shape[-2:]
    A, bias, softmax = operator_terms(
        student_class, kernel, n=n, d=d, beta=beta, P=P.expand(len(kernel), n, d)
    )
    rows = torch.arange(len(X)).expand(len(kernel), len(X))
    return fused.fused_step(X, Y, rows, A, bias, V, softmax, backward=False)[0]


def _final_metrics(
    tasks,
    student_class,
    A,
    V,
    task_of,
    grid,
    seeds,
    static_student,
    steps_run,
    converged,
    beta,
    P,
    dev,
    backend="torch",
) -> pd.DataFrame:
    f32 = dict(dtype=torch.float32, device=dev)
    with torch.no_grad():
        spectra = torch.linalg.svdvals(A.double()).cpu().numpy()
        rows = []
        for t, (arrays, meta) in enumerate(tasks):
            sel = (task_of == t).nonzero().flatten()
            mse = {}
            for split in ("train", "test"):
                X = torch.as_tensor(arrays[f"X_{split}"]).to(**f32)
                Y = torch.as_tensor(arrays[f"Y_{split}"]).to(**f32)
                if backend == "fused":
                    mse[split] = _evaluate_fused(
                        student_class, X, Y, A[sel], V[sel], beta, P[t]
                    ).numpy()
                    continue
                Xs = X.expand(len(sel), *X.shape)
                Ys = Y.expand(len(sel), *Y.shape)
                mse[split] = (
                    _evaluate(student_class, Xs, Ys, A[sel], V[sel], beta, P[t]).cpu().numpy()
                )
            teacher = np.asarray(meta["kernel_singular_values"])
            for j, s in enumerate(sel.cpu().numpy()):
                rank = int(grid[s, 2])
                rows.append(
                    {
                        "task_id": meta["task_id"],
                        "rung": meta["class"],
                        "r_star": meta["r_star"],
                        "task_seed": meta["seed"],
                        "student_class": student_class,
                        "static_student": static_student,
                        "rank": rank,
                        "seed": seeds[int(grid[s, 1])],
                        "train_mse": float(mse["train"][j]),
                        "test_mse": float(mse["test"][j]),
                        "R": float(
                            (mse["test"][j] - meta["sigma"] ** 2) / meta["test_clean_power"]
                        ),
                        "R_theory": tail_energy(teacher, rank),
                        "steps": int(steps_run[s]),
                        "converged": bool(converged[s]),
                        "spectrum": spectra[s].tolist(),
                    }
                )
    return pd.DataFrame(rows)


def _long_rows(rows, metrics: pd.DataFrame, value: str) -> pd.DataFrame:
    keys = metrics[["task_id", "rung", "r_star", "student_class", "static_student", "rank", "seed"]]
    out = []
    for ids, step, vals in rows:
        part = keys.iloc[ids].reset_index(drop=True).assign(step=step)
        part[value] = list(vals) if vals.ndim > 1 else vals
        out.append(part)
    df = pd.concat(out, ignore_index=True)
    if value == "spectrum":
        df[value] = df[value].map(lambda a: np.asarray(a, dtype=np.float64).tolist())
    return df.sort_values(["task_id", "rank", "seed", "step"], kind="stable").reset_index(drop=True)
