"""One pass over a user's X, Y [B, n, d]: which sequences each predictor sees, the memory that
takes, and the pass itself (NaN/Inf check of every value, P_attn streamed, subsamples gathered).

Scale (the 100,000 × 64 × 64 target: ≤ 10 s on 2 cores, ≤ 4 GB): the arrays are read in chunks
(:mod:`.npyio`), so memory does not grow with B. The predictors run on deterministic, seeded
subsamples whose sizes are reported:

* P_attn accumulates C = Σ_b Z_b Z_bᵀ in float64 over at most ``attn_max_sequences`` sequences
  (default: all while B·n·d·max(n, d) ≤ 2³², i.e. every sequence at d = 16, 16,384 of them at
  n = d = 64): its d×d spectrum converges long before that.
* P_static's (nd × nd) least squares uses ``static_oversample`` × nd sequences, skipped, with a
  note, when nd or its d² × d² Van Loan–Pitsianis eigenproblem exceeds ``static_max_size``: its
  cost grows as (nd)³ and d⁶ (n = d = 32 takes ~2 s, n = 16, d = 64 over a minute on 2 cores).
* P_invert (value known, n ≤ d) uses ``invert_max_sequences``.

Memory is planned before anything is allocated (:func:`memory_needed`): a shape whose working set
exceeds the machine's available memory is refused with the figure, never attempted.
"""

from __future__ import annotations

import math
import os
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import torch

from entropic_bound.predict.attention import AttnAccumulator
from entropic_bound.predict.confidence import Tally
from entropic_bound.predict.datascale import BASIS_SEQUENCES, token_basis
from entropic_bound.predict.sources import InputError, rows_per_chunk

#: P_attn work budget: all sequences while B·n·d·max(n, d) stays below this (~3 s on 2 cores)
ATTN_WORK = 1 << 32
#: the spectral-floor noise estimate needs tr((X̃ᵀX̃)⁻¹); a sample of this many sequences suffices
TRACE_SEQUENCES = 2048
#: the paper's default estimator: r_E(0.99) is the least rank whose surrogate excess risk is
#: ≤ 1% (docs/method.md §1) and the estimator robust to softmax distortion (claim C8)
DEFAULT_ESTIMATOR = "energy_0.99"
#: --estimator's default: r_E(0.99), or the floor-aware rank on softmax-like data (X3)
AUTO_ESTIMATOR = "auto"


@dataclass(frozen=True)
class Settings:
    """The options of a prediction (each is the ``--option`` of the same name)."""

    estimator: str = AUTO_ESTIMATOR
    value_known: bool = False  # the value map is the identity: enables P_invert when n <= d
    seed: int = 0  # of the subsamples
    attn_max_sequences: int | None = None  # None: the ATTN_WORK budget; 0: all
    no_static: bool = False
    static_max_size: int = 1024
    static_oversample: int = 8
    invert_max_sequences: int = 1024
    causal: bool = False  # lower-triangular attention (--causal, or a causal `mask` member)
    head: int | None = None  # of Y [B, H, n, d_v]: this head only (None: every head)

    def check(self) -> None:
        for name in ("static_max_size", "static_oversample", "invert_max_sequences"):
            value = getattr(self, name)
            if not isinstance(value, int | np.integer) or isinstance(value, bool) or value < 1:
                raise InputError(
                    f"--{name.replace('_', '-')} {value}: must be >= 1", "give a positive integer"
                )
        if self.attn_max_sequences is not None and self.attn_max_sequences < 0:
            raise InputError(
                f"--attn-max-sequences {self.attn_max_sequences}: must be >= 0",
                "give 0 for all sequences",
            )
        if not 0 <= self.seed < 2**63:
            raise InputError(
                f"--seed {self.seed}: must be in [0, 2^63)", "give a non-negative integer"
            )


@dataclass
class Plan:
    """Which sequences each predictor sees (an index array, or None: all)."""

    B: int
    n: int
    d: int
    attn: np.ndarray | None
    n_attn: int
    dv: int = 0  # Y's d_v (0: d)
    static: np.ndarray | None = None
    n_static: int = 0
    static_skip: str | None = None
    invert: np.ndarray | None = None
    n_invert: int = 0
    invert_skip: str | None = None
    causal: np.ndarray | None = None  # the causal P_attn's subsample (with Settings.causal)
    n_causal: int = 0
    workers: int = 1
    memory: dict = field(default_factory=dict)

    def __post_init__(self):
        self.dv = self.dv or self.d


def _subsample(rng: np.random.Generator, B: int, m: int) -> np.ndarray | None:
    return None if m >= B else np.sort(rng.choice(B, size=m, replace=False))


#: rows (sequences × tokens) the causal P_attn fits: its unknowns are d² + 2·d·d_v (≤ 768 at
#: d = d_v = 16); an L-BFGS iteration costs about 4·rows·(n + d)·d multiply-adds
CAUSAL_ROWS = 4096


def make_plan(settings: Settings, B: int, n: int, d: int, dv: int | None = None) -> Plan:
    """Which sequences each predictor sees, and why a predictor is skipped (Y: [B, n, d_v])."""
    dv = d if dv is None else dv
    rng = np.random.default_rng(settings.seed)
    cap = settings.attn_max_sequences
    if cap is None:
        cap = max(1024, ATTN_WORK // (n * max(d, dv) * max(n, d)))
    n_attn = B if cap == 0 else min(B, cap)
    plan = Plan(
        B, n, d, _subsample(rng, B, n_attn), n_attn, dv=dv, workers=max(1, torch.get_num_threads())
    )
    _plan_static(plan, settings, rng)
    _plan_invert(plan, settings, rng)
    if settings.causal:
        unknowns = d * d + 2 * d * dv
        plan.n_causal = min(B, max(-(-CAUSAL_ROWS // n), -(-4 * unknowns // n)))
        plan.causal = _subsample(rng, B, plan.n_causal)
    plan.memory = memory_needed(plan)
    return plan


def _plan_static(plan: Plan, settings: Settings, rng) -> None:
    n, d, dv, B = plan.n, plan.d, plan.dv, plan.B
    nd = n * d
    if settings.no_static:
        plan.static_skip = "skipped (--no-static)"
    elif max(nd, n * dv, d * dv) > settings.static_max_size:
        plan.static_skip = (
            f"skipped: its least squares has n*d = {nd} unknowns and its Van Loan–Pitsianis "
            f"eigenproblem is d·d_v = {d * dv} wide, beyond --static-max-size "
            f"{settings.static_max_size} (cost grows as (nd)³ and d⁶); raise --static-max-size "
            "to run it"
        )
    elif B < nd:  # P_attn needs far fewer: the file is still answered
        plan.static_skip = (
            f"skipped: its least squares fits an n*d = {nd}-dimensional linear map and needs at "
            f"least {nd} sequences, got {B} (the static-fit share is not computed, so a static "
            "mixing cannot be told from attention)"
        )
    else:
        plan.n_static = min(B, settings.static_oversample * nd)
        plan.static = _subsample(rng, B, plan.n_static)


def _plan_invert(plan: Plan, settings: Settings, rng) -> None:
    n, d, B = plan.n, plan.d, plan.B
    if not settings.value_known:
        plan.invert_skip = "skipped: needs --value-known (the value map is the identity)"
    elif plan.dv != d:
        plan.invert_skip = (
            f"skipped: P_invert divides Y by the value map V (P̂ = Y V⁻¹ X⁺), which needs V "
            f"invertible, and V is d × d_v = {d} × {plan.dv}; it cannot be inverted"
        )
    elif n > d:
        plan.invert_skip = f"skipped: needs n <= d to invert the tokens exactly (n = {n} > d = {d})"
    else:
        pairs = n * (n - 1) // 2 if settings.causal else n * (n - 1)  # equations per sequence
        need = -(-d * d // pairs)
        if B < need:
            what = "B·n(n−1)/2 (causal)" if settings.causal else "B·n·(n−1)"
            plan.invert_skip = (
                f"skipped: its least squares for A needs {what} >= d², i.e. at least {need} "
                f"sequences, got {B}"
            )
        else:
            plan.n_invert = min(B, max(settings.invert_max_sequences, need))
            plan.invert = _subsample(rng, B, plan.n_invert)


def attn_batch_rows(n: int, d: int) -> int:
    """Sequences per P_attn batch: about CHUNK_ITEMS working values (X, Y, X̃⁺, Z, Gram)."""
    return rows_per_chunk((0, n, d), extra=2 * n * d + d * d + min(n, d) ** 2)


def memory_needed(plan: Plan) -> dict[str, int]:
    """Bytes each part of a prediction allocates at its peak (float64), from (n, d) and the
    subsample sizes only: the bound that :func:`check_memory` holds against the machine."""
    n, w, f8 = plan.n, plan.workers, 8
    d = max(plan.d, plan.dv)  # an upper bound: the d × d_v arrays fit in d × d ones
    batch = attn_batch_rows(n, d)
    per_seq = 3 * n * d + 2 * d * d + min(n, d) ** 2
    # C, and per batch in flight (w + 1 at most): its sequences' arrays and a partial C
    attn = f8 * (d * d + (w + 1) * (batch * per_seq + d * d))
    read = 2 * f8 * rows_per_chunk((0, n, d)) * n * d * 3  # a chunk of X, Y and their copies
    nd = n * d
    static = (
        f8 * (2 * plan.n_static * nd + 3 * nd * nd + n * n * d * d + min(n * n, d * d) ** 2)
        if plan.n_static
        else 0
    )
    invert = f8 * (2 * plan.n_invert * nd + 3 * d**4 + 4 * plan.n_invert * (d * d + n * n))
    causal = f8 * plan.n_causal * n * (2 * d * d + 3 * d)  # prefix operators, P W, x ⊗ x
    return {
        "P_attn": attn + causal,
        "reading": read,
        "P_static": static,
        "P_invert": invert if plan.n_invert else 0,
    }


def available_memory() -> int | None:
    """Bytes this process may still allocate: MemAvailable, capped by RLIMIT_AS (None: unknown)."""
    avail = None
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    avail = int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        try:
            avail = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):
            avail = None
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        if soft != resource.RLIM_INFINITY:
            avail = soft if avail is None else min(avail, soft)
    except (ImportError, ValueError, OSError):
        pass
    return avail


def check_memory(plan: Plan, available: int | None) -> None:
    """Refuse, with the figures, a plan whose peak exceeds the available memory."""
    if available is None:
        return
    need = plan.memory
    total = need["reading"] + max(need["P_attn"], need["P_static"], need["P_invert"])
    if total <= available:
        return
    gb = 1e9
    part = max(("P_attn", "P_static", "P_invert"), key=need.get)
    if part == "P_attn":
        what = (
            f"d = {plan.d} needs ≈ {plan.d**2 * 8 / gb:.1f} GB for P_attn's d × d sums "
            f"(≈ {total / gb:.1f} GB in all with its working arrays)"
        )
        todo = "reduce d, e.g. project the tokens onto fewer dimensions, or use a larger machine"
    elif part == "P_static":
        what = f"P_static at n*d = {plan.n * plan.d} needs ≈ {total / gb:.1f} GB"
        todo = "lower --static-max-size or pass --no-static"
    else:
        what = f"P_invert at d = {plan.d} needs ≈ {total / gb:.1f} GB for its d² × d² least squares"
        todo = "drop --value-known or lower --invert-max-sequences"
    raise InputError(f"{what}, more than the ≈ {available / gb:.1f} GB available", todo)


def _pick(idx: np.ndarray | None, start: int, stop: int) -> np.ndarray | slice:
    if idx is None:
        return slice(None)
    lo, hi = np.searchsorted(idx, [start, stop])
    return idx[lo:hi] - start


#: the largest |value| of X and of Y must lie in this range (or be 0): the predictors square and
#: multiply them (C = Σ_b Z_b Z_bᵀ with Z_b = X_b⁺Y_b, Gram matrices, least squares), and beyond it
#: those products can leave float64's normal range without any error (Y ~ 1e-200 gave rank 0)
SCALE_RANGE = (1e-50, 1e50)


def _check_finite(block: np.ndarray, name: str, start: int) -> float:
    """Refuse NaN/Inf; the largest |value| of ``block`` (0 for integers: always in range)."""
    if block.dtype.kind != "f" or block.size == 0:
        return 0.0
    hi, lo = block.max(), block.min()  # NaN propagates through both, +Inf to hi, -Inf to lo
    if not (np.isfinite(hi) and np.isfinite(lo)):
        bad = int(np.flatnonzero(~np.isfinite(block).reshape(len(block), -1).all(1))[0])
        raise InputError(
            f"{name} contains NaN or Inf (first in sequence {start + bad})",
            "remove or repair those sequences before predicting",
        )
    return max(float(hi), -float(lo))


def _check_scale(largest: dict[str, float]) -> None:
    low, high = SCALE_RANGE
    for name, top in largest.items():
        if top != 0 and not low <= top <= high:
            raise InputError(
                f"{name}'s values reach at most {top:.3g} in magnitude, outside [{low:g}, "
                f"{high:g}], where the predictors' products leave float64's range",
                "rescale X and Y (e.g. to unit variance)",
            )


class _SingleThreadedTorch:
    """Torch intra-op threads off while our own workers run: batched small factorisations split
    over OpenMP threads stall at every barrier once another process shares the cores (10x slower
    on a busy 2-core machine), while whole batches per worker thread scale and never stall."""

    def __enter__(self):
        self.threads = torch.get_num_threads()
        torch.set_num_threads(1)
        return self.threads

    def __exit__(self, *exc):
        torch.set_num_threads(self.threads)


def _partial(acc: AttnAccumulator, xs, ys, idx, n_trace):
    return acc.partial(torch.from_numpy(xs)[None], torch.from_numpy(ys)[None], idx, n_trace)


#: the subsamples gathered during the pass besides P_attn's (Plan attribute of each)
GATHERED = ("static", "invert", "causal")


class _Pass:
    """The state of one pass: the accumulator, the batches in flight on the pool, the
    subsamples being gathered and the largest |value| seen (see :func:`run_pass`)."""

    def __init__(self, plan: Plan, pool, workers: int, basis: np.ndarray | None = None):
        self.plan, self.pool, self.workers = plan, pool, workers
        self.basis = basis  # P_attn reads the tokens in these directions (token_basis)
        k = plan.d if basis is None else basis.shape[1]
        self.acc = AttnAccumulator(plan.n, k, diagnostics=True)
        self.rows = rows_per_chunk((0, plan.n, max(plan.d, plan.dv)))
        # batches of a fixed size, whatever the number of workers: the same sums in the same order
        self.batch = max(1, min(self.rows, attn_batch_rows(plan.n, max(plan.d, plan.dv))) // 2)
        self.gathered = {k: ([], []) for k in GATHERED if getattr(plan, f"n_{k}") > 0}
        self.pending: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.futures: deque = deque()
        self.traced = 0
        self.largest = {"X": 0.0, "Y": 0.0}  # max |value| over every sequence
        self.tally = Tally()  # the confidence signals' sums (confidence.py)

    def flush(self, limit: int) -> None:
        if self.pending:
            xs, ys, idx = (np.concatenate(v) for v in zip(*self.pending))
            self.pending.clear()
            n_trace = min(len(idx), TRACE_SEQUENCES - self.traced)
            self.traced += n_trace
            self.futures.append(self.pool.submit(_partial, self.acc, xs, ys, idx, n_trace))
        while len(self.futures) > limit:  # bounded memory: at most `limit` batches in flight
            self.acc.merge(self.futures.popleft().result())

    def chunk(self, start: int, xb: np.ndarray, yb: np.ndarray) -> None:
        """One chunk of rows: checked, batched for P_attn, and its subsample rows gathered."""
        self.largest["X"] = max(self.largest["X"], _check_finite(xb, "X", start))
        self.largest["Y"] = max(self.largest["Y"], _check_finite(yb, "Y", start))
        stop = start + len(xb)
        sel = _pick(self.plan.attn, start, stop)
        index = np.arange(start, stop)[sel]
        xa = np.array(xb[sel], dtype=np.float64)
        ya = np.array(yb[sel], dtype=np.float64)
        self.tally.add(xa, ya)
        if self.basis is not None:
            xa = xa @ self.basis
        for lo in range(0, len(index), self.batch):
            self.pending.append(
                (xa[lo : lo + self.batch], ya[lo : lo + self.batch], index[lo : lo + self.batch])
            )
            if sum(len(p[2]) for p in self.pending) >= self.batch:
                self.flush(self.workers)
        for key, (xs, ys) in self.gathered.items():
            picked = _pick(getattr(self.plan, key), start, stop)
            xs.append(np.array(xb[picked], dtype=np.float64))
            ys.append(np.array(yb[picked], dtype=np.float64))

    def result(self) -> tuple[AttnAccumulator, dict]:
        _check_scale(self.largest)
        acc = self.acc
        if acc.C is None or not (
            torch.isfinite(acc.C).all() and math.isfinite(acc.y2) and math.isfinite(acc.x2)
        ):
            raise InputError("X or Y values overflow float64 arithmetic", "rescale X and Y")
        out = {k: None for k in GATHERED}
        out.update({k: tuple(np.concatenate(v) for v in xy) for k, xy in self.gathered.items()})
        out["tally"] = self.tally
        out["basis"] = self.basis
        return acc, out


def run_pass(X, Y, plan: Plan, progress=None) -> tuple[AttnAccumulator, dict]:
    """The one pass over X, Y (sources with ``rows(k)``): every value checked for NaN/Inf, P_attn
    and its diagnostics on the attention subsample (batches on a pool of as many threads as torch
    would use, overlapping the reading), and the P_static / P_invert / causal subsamples
    gathered (a dict: their (X, Y), or None). Partial sums merge in file order, so results do
    not depend on the timing. ``progress(k)`` is called with the number of sequences read."""
    with _SingleThreadedTorch() as workers, ThreadPoolExecutor(max(1, workers)) as pool:
        rows = rows_per_chunk((0, plan.n, max(plan.d, plan.dv)))
        basis = None
        if plan.n > plan.d:  # where P_attn centres (docs/method.md §3)
            chunks = (xb[_pick(plan.attn, start, start + len(xb))] for start, xb in X.rows(rows))
            basis = token_basis(chunks, BASIS_SEQUENCES)
        state = _Pass(plan, pool, workers, basis)
        try:
            with np.errstate(all="ignore"):
                for (start, xb), (_, yb) in zip(X.rows(state.rows), Y.rows(state.rows)):
                    state.chunk(start, xb, yb)
                    if progress is not None:
                        progress(len(xb))
                state.flush(0)
        finally:
            for f in state.futures:
                f.cancel()
    return state.result()
