"""The batched training engine (docs/method.md §4): the loop, and the tables it returns.

One tensor program trains every student of one class on a set of tasks of equal shape. The
pieces, one module each:

* layout.py: which task, student seed and rank each row of the batch is (a rank sweep's full
  grid, or a rank search's chosen ranks), and the per-stream seed;
* backends.py: the parameters as flat rows, one gradient function per backend (``fused``: the
  C kernel of fused.py, CPU; ``torch``: autograd, any device) and the one Adam;
* schedule.py: when a student retires (converged, plateau after its learning-rate drops, or
  out of steps); retired students leave the batch, so a finished student stops costing compute;
* tables.py: the tables a run returns (metrics per student, learned spectra and loss by step).

The loss is the sum of per-student MSEs, so every student's gradient is its own. Everything
random is drawn per (task, student seed) stream, so a student's trajectory does not depend on
which other students share its batch (tests check this), and on CPU a fixed config is bitwise
reproducible.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import torch

from entropic_bound.core.rungs import kernel_dim, parse_rung
from entropic_bound.core.seeds import student_stream
from entropic_bound.tasks.make import task_pair
from entropic_bound.train import fused
from entropic_bound.train.backends import (
    GRADIENTS,
    Problem,
    Shapes,
    adam_step,
    factored_ranks,
)
from entropic_bound.train.layout import StudentLayout
from entropic_bound.train.schedule import RetirementSchedule
from entropic_bound.train.tables import final_metrics, long_rows
from entropic_bound.train.tables import tail_energy as tail_energy  # search.py imports it here


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
    restarts: int = 0  # fresh initialisations of a student that ends unconverged (restarts.py)

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


@dataclass
class Active:
    """The students still training: their layout rows ``ids``, flat parameters ``W`` (see
    backends.py), gradient ``G`` and Adam moments ``m1, m2``, all [len(ids), P]."""

    ids: torch.Tensor
    W: torch.Tensor
    G: torch.Tensor
    m1: torch.Tensor
    m2: torch.Tensor

    def keep(self, mask: torch.Tensor) -> None:
        self.ids, self.W, self.G = self.ids[mask], self.W[mask], self.G[mask]
        self.m1, self.m2 = self.m1[mask], self.m2[mask]


def initial_state(
    metas,
    layout: StudentLayout,
    sh: Shapes,
    optim: Optim,
    N: int,
    init_scale,
    base_seed,
    dev,
    restart: int = 0,
):
    """Initial parameters ``W: [S, P]`` and minibatch indices ``[streams, max_steps, batch]``.

    Both are drawn per stream (:func:`seeds.student_stream`, ``restart``: which
    initialisation); factors are full k×k draws, sliced, so a student's init does not depend
    on the other ranks in its batch.
    """
    Q0, K0, V0, idx = [], [], [], []
    for m in metas:
        for seed in layout.seeds:
            g = student_stream(base_seed, m["task_id"], layout.student_class, seed, restart)
            Q0.append(torch.randn(sh.k, sh.k, generator=g)[:, : sh.rmax])
            K0.append(torch.randn(sh.k, sh.k, generator=g)[:, : sh.rmax])
            V0.append(torch.randn(sh.d, sh.d, generator=g))
            idx.append(torch.randint(N, (optim.max_steps, optim.batch), generator=g))
    stream = torch.as_tensor(layout.stream)
    rank = torch.as_tensor(layout.rank)
    mask = (torch.arange(sh.rmax)[None, :] < rank[:, None]).to(torch.float32)[:, None, :]
    S, kr = len(layout), sh.k * sh.rmax
    W = torch.cat(
        [
            (torch.stack(Q0)[stream] * mask).reshape(S, kr),
            (torch.stack(K0)[stream] * mask).reshape(S, kr),
            torch.stack(V0)[stream].reshape(S, sh.d * sh.d),
        ],
        dim=1,
    )
    W = (W * init_scale).to(dtype=torch.float32, device=dev).contiguous()
    return W, torch.stack(idx).to(dev)


class Record:
    """What training leaves behind: each student's final parameters, steps and convergence,
    learned spectra at checkpoints and on retirement, and the windowed training loss."""

    def __init__(self, W: torch.Tensor, sh: Shapes, optim: Optim, checkpoints: int):
        S, dev = W.shape[0], W.device
        self.sh = sh
        self.final = W.clone()
        self.window = torch.zeros(S, dtype=torch.float32, device=dev)
        self.steps = torch.zeros(S, dtype=torch.long, device=dev)
        self.converged = torch.zeros(S, dtype=torch.bool, device=dev)
        grid = np.linspace(0, optim.max_steps, checkpoints).round().astype(int)
        self.checkpoints = set(np.unique(grid).tolist())
        self.dynamics: list[tuple[np.ndarray, int, np.ndarray]] = []
        self.loss: list[tuple[np.ndarray, int, np.ndarray]] = []

    def spectra(self, step: int, ids, w) -> None:
        with torch.no_grad():
            sv = torch.linalg.svdvals(self.sh.kernel(w).double())
        self.dynamics.append((ids.cpu().numpy(), step, sv.cpu().numpy()))

    def retire(self, step: int, ids, w) -> None:
        self.final[ids] = w
        self.steps[ids] = step
        self.spectra(step, ids, w)


def _job(tasks, student_class: str, ranks, seeds, rows, dev, optim: Optim, products: str):
    """The layout of the students and the :class:`backends.Problem` of a job."""
    metas = [m for _, m in tasks]
    n, d, beta = metas[0]["n"], metas[0]["d"], metas[0]["beta"]
    if any((m["n"], m["d"], m["beta"]) != (n, d, beta) for m in metas):
        raise ValueError("tasks trained together must share n, d and beta")
    k = kernel_dim(student_class, n, d)
    ids = [m["task_id"] for m in metas]
    if ranks is not None:
        layout = StudentLayout.grid(ids, seeds, ranks, student_class)
    else:
        layout = StudentLayout.from_rows(rows or [], ids, seeds, student_class)
    if not len(layout) or layout.max_rank > k or int(layout.rank.min()) < 1:
        raise ValueError(f"ranks must lie in 1..{k} for class {student_class}, got {ranks}")
    parse_rung(student_class)
    f32 = dict(dtype=torch.float32, device=dev)
    X, Y, P = (
        torch.stack([torch.as_tensor(a[key]) for a, _ in tasks]).to(**f32)
        for key in ("X_train", "Y_train", "P")
    )
    T, N = X.shape[:2]
    # factors always have k columns (rank r: columns ≥ r zero), whatever ranks share the batch:
    # Q Kᵀ then sums over the same k terms in the same order, so a student's arithmetic, and
    # its result, are bitwise the same in a sweep, a search round or alone (on CPU)
    sh = Shapes(k=k, rmax=k, d=d, n=n)
    flat = (X.reshape(T * N, n, d), Y.reshape(T * N, n, d))
    factored = factored_ranks(layout.rank, student_class, n, d, products)
    factored = torch.as_tensor(factored, dtype=torch.int32) if factored.any() else None
    prob = Problem(student_class, *flat, P, beta, sh, optim.batch, max(1, optim.chunk), factored)
    return layout, prob, Y.pow(2).mean((1, 2, 3))


_NOTED: set[str] = set()


def _note_once(text: str) -> None:
    """One line on stderr (the job's log), once per process: a search calls training per round."""
    if text not in _NOTED:
        _NOTED.add(text)
        print(f"entropic-bound: {text}", file=sys.stderr)


def flush_denormal_is_on() -> bool:
    """Whether this thread flushes subnormal floats to zero. torch has a setter
    (``torch.set_flush_denormal``) and no getter: half the least normal float32 is subnormal,
    so it comes out 0 exactly when they are flushed."""
    return bool(torch.tensor(torch.finfo(torch.float32).tiny) * 0.5 == 0)


def _flushing_denormals(train):
    """Run ``train`` with subnormal floats flushed to zero (saturated softmax tails make them;
    they are slow on x86, and every result was made this way), then put the caller's mode back,
    also when it raises: the mode is process-wide state that a library call must not leave
    changed (a caller's float arithmetic would change with it; hypothesis refuses to draw
    floats under it)."""

    @functools.wraps(train)
    def wrapper(*args, **kwargs):
        before = flush_denormal_is_on()
        torch.set_flush_denormal(True)
        try:
            return train(*args, **kwargs)
        finally:
            torch.set_flush_denormal(before)

    return wrapper


@_flushing_denormals
def train_students(
    tasks: list[tuple[dict, dict]],
    student_class: str,
    ranks: list[int] | None,
    seeds: list[int],
    optim: Optim,
    *,
    init_scale: float = 1e-2,
    epsilon: float | Sequence[float] = 1e-3,
    checkpoints: int = 20,
    base_seed: int = 0,
    static_student: bool = False,
    device: str = "auto",
    backend: str = "auto",
    products: str = "auto",
    rows: list[tuple[int, int, int]] | None = None,
    progress=None,
    restart: int = 0,
    factors: bool = False,
) -> dict[str, pd.DataFrame]:
    """Train every (task, seed, rank) student of ``student_class`` in one batched program.

    ``tasks``: list of (arrays, meta) as returned by ``tasks.load_task``, or of
    ``tasks.make_task``'s dicts (equal n, d, β).
    The students are the grid tasks × ``seeds`` × ``ranks``, or, when ``ranks`` is None, the
    (task index, seed index, rank) triples ``rows`` (a rank search's round). ``progress``, if
    given, is called at every evaluation as ``progress(step, max_steps, retired, students)``.
    Returns DataFrames ``metrics`` (one row per student), ``dynamics`` (learned spectra at
    ~``checkpoints`` steps) and ``loss`` (windowed training loss every eval_every steps).
    ``epsilon``: the retirement target, one float or one per task (ε_task, docs/method.md §5b).
    ``products``: how the fused kernel forms a low-rank student's bilinear term
    (:func:`backends.factored_ranks`). ``restart``: which initialisation of each student
    (0: the first; :mod:`train.restarts` draws the others). ``factors``: a fourth table,
    ``factors``, of every student's final Q, K (cut to its rank) and V (train/factors.py).
    """
    tasks = [task_pair(t) for t in tasks]  # make_task's dicts too
    dev = pick_device(device)
    backend = pick_backend(backend, dev)
    products = _products_of(backend, products)
    run = _Training.start(tasks, student_class, ranks, seeds, rows, dev, optim, products, backend)
    run.init([m for _, m in tasks], init_scale, base_seed, epsilon, checkpoints, restart)
    for step in range(optim.max_steps):
        run.step(step)
        last = step + 1 >= optim.max_steps
        if (step + 1) % optim.eval_every and not last:
            continue
        run.evaluate(step + 1, last)
        if progress is not None:
            S = len(run.layout)
            progress(step + 1, optim.max_steps, S - run.act.ids.numel(), S)
        if run.act.ids.numel() == 0:
            break
    rec = run.rec
    metrics = final_metrics(tasks, run.layout, run.prob, rec, static_student, dev, backend)
    out = {
        "metrics": metrics,
        "dynamics": long_rows(rec.dynamics, metrics, "spectrum"),
        "loss": long_rows(rec.loss, metrics, "train_loss"),
    }
    if factors:
        from entropic_bound.train.factors import final_factors

        out["factors"] = final_factors(run.layout, run.prob.shapes, rec.final)
    return out


def _products_of(backend: str, products: str) -> str:
    """``train.products`` as the backend can run it: the torch backend forms A = Q Kᵀ."""
    if backend == "torch" and products == "factored":  # device auto found CUDA, or no kernel
        _note_once(
            "train.products: factored is the fused CPU kernel's; the torch backend forms "
            "A = Q Kᵀ (the same students, to float32 rounding)"
        )
        return "dense"
    return products


@dataclass
class _Training:
    """One batched training run: the job (:func:`_job`: layout, problem, each task's training
    power), which task and stream each student row is, and, once :meth:`init` has drawn them,
    the minibatch indices ``batch_idx``: [streams, max_steps, batch], the students still
    training (:class:`Active`), their retirement schedule and what they leave (:class:`Record`)."""

    layout: StudentLayout
    prob: Problem
    train_power: torch.Tensor  # [T]: mean Y_train² per task (training R = loss / power)
    optim: Optim
    backend: str
    task_of: torch.Tensor  # [S]
    stream_of: torch.Tensor  # [S]
    N: int  # training sequences per task
    batch_idx: torch.Tensor = field(init=False)
    act: Active = field(init=False)
    sched: RetirementSchedule = field(init=False)
    rec: Record = field(init=False)

    @classmethod
    def start(cls, tasks, student_class, ranks, seeds, rows, dev, optim, products, backend):
        layout, prob, power = _job(tasks, student_class, ranks, seeds, rows, dev, optim, products)
        task_of, stream_of = (torch.as_tensor(a, device=dev) for a in (layout.task, layout.stream))
        N = prob.X.shape[0] // len(tasks)
        return cls(layout, prob, power, optim, backend, task_of, stream_of, N)

    def init(self, metas, init_scale, base_seed, epsilon, checkpoints: int, restart: int = 0):
        """Draw the initial parameters and minibatches; every student starts active."""
        S, sh, optim, dev = len(self.layout), self.prob.shapes, self.optim, self.task_of.device
        W, self.batch_idx = initial_state(
            metas, self.layout, sh, optim, self.N, init_scale, base_seed, dev, restart
        )
        self.act = Active(torch.arange(S, device=dev), W, *(torch.zeros_like(W) for _ in range(3)))
        self.sched = RetirementSchedule(S, optim, _per_student(epsilon, self.layout), dev)
        self.rec = Record(W, sh, optim, checkpoints)

    def step(self, step: int) -> None:
        """One gradient step (counted from 0) of every active student on its own minibatch."""
        act, rec = self.act, self.rec
        if step in rec.checkpoints:
            rec.spectra(step, act.ids, act.W)
        task = self.task_of[act.ids]
        rows_now = (task * self.N)[:, None] + self.batch_idx[self.stream_of[act.ids], step]
        loss = GRADIENTS[self.backend](self.prob, act.W, act.G, rows_now, task, act.ids)
        _check_finite(loss, act.ids, self.layout, step)
        rec.window[act.ids] += loss
        adam_step(self.backend, act.W, act.G, act.m1, act.m2, self.sched.lr[act.ids], step)

    def evaluate(self, steps: int, last: bool) -> None:
        """After ``steps`` steps: record the windowed loss, retire the converged or plateaued
        students and compact the batch."""
        act, rec = self.act, self.rec
        task = self.task_of[act.ids]
        with torch.no_grad():
            w = rec.window[act.ids] / self.optim.eval_every
            rec.window.zero_()
            rec.loss.append((act.ids.cpu().numpy(), steps, w.cpu().numpy()))
            done, conv = self.sched.update(act.ids, w, w / self.train_power[task], last)
            rec.converged[act.ids] = conv
            if bool(done.any()):
                rec.retire(steps, act.ids[done], act.W[done])
                act.keep(~done)


def _per_student(epsilon, layout):
    """ε of every student: a float for all, or one per task (ε_task) read by the student's task."""
    if np.ndim(epsilon) == 0:
        return float(epsilon)
    return np.asarray(epsilon, dtype=np.float64)[layout.task]


def _check_finite(loss, ids, layout: StudentLayout, step) -> None:
    if bool(torch.isfinite(loss).all()):
        return
    row = int(ids[~torch.isfinite(loss)][0])
    raise ValueError(
        f"training of {layout.student_class} diverged (non-finite loss) on "
        f"{layout.describe(row)} at step {step + 1}; lower train.classes.<class>.lr"
    )
