"""A task's data X, Y generated chunk by chunk from its random stream (docs/method.md §1).

After the teacher, a task's stream draws X_train, E_train, X_test, E_test (each [B, n, d] float64,
in this order: tasks/make.py) and Y = M(X) X V* + σ E. Making a split in chunks of sequences needs
the stream at two places at once, X's chunk and E's, so a second generator starts where E does.
It is found by drawing X once and discarding it, and the positions are remembered per stream
state (:data:`_POSITIONS`): the rungs that share X (tasks/make.py) find them once per process.
At σ = 0 Y does not read E: E is never drawn, and E's start is where the one pass over X ends.
The tasks stage records them in a file without data, with a digest per chunk, so that a reader
draws from them directly, and draws only the chunks it reads (:func:`generate_part`,
tasks/parts.py).
The drawn X and E of the last stream are kept for the next rung when they are small
(:data:`DRAWN_MAX_VALUES`: the paper's 25 MB, a third of a task's cost; the tasks stage makes the
rungs of one stream one after another). At d = n = 64, B = 16384 they would be 1.1 GB of float64,
and are drawn again (docs/notebook.md, 2026-12-04).

Why chunks give the one-draw values bitwise: torch's CPU sampler turns the uniform stream into
normals 16 values at a time, so a block drawn in pieces of a multiple of 16 values (the last at
least 16) is the block of one draw, and leaves the stream in the same state
(:func:`chunk_bounds` keeps to that); every operator works sequence by sequence (batched products,
row softmax). tests/tasks/test_task_data.py checks both against the one-draw generation, kept
verbatim in tests/tasks_reference.py. Peak memory is a few chunks of float64, not the split.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
import torch

# CHUNK_VALUES: values per float64 array of a chunk (tasks/files.py, which also bounds the
# memory of making a task again from it)
from entropic_bound.tasks.keys import CHUNK_VALUES, DATA_KEYS
from entropic_bound.tasks.mixing import apply_operator

#: the torch sampler's block: pieces of a multiple of this many values draw what one draw does
_NORMAL_BLOCK = 16
#: stream positions remembered (each entry is four generator states of ~5 KB)
_MAX_POSITIONS = 256
#: (stream state at X_train's start, split sizes, n·d) -> the generator state where each
#: split's X and E start, [(X_train, E_train), (X_test, E_test)]
_POSITIONS: dict[tuple, list[tuple[torch.Tensor, torch.Tensor]]] = {}
#: the most float64 values (X and E of every split) whose draws are kept for the next task of
#: the same stream state (64 MB)
DRAWN_MAX_VALUES = 8 << 20
#: (key of :data:`_POSITIONS`, n, d, chunk_values, noise) -> the chunks drawn for it (E None
#: without noise): the last stream only
_DRAWN: dict[tuple, list] = {}


def chunk_bounds(
    size: int, per_seq: int, chunk_values: int = CHUNK_VALUES
) -> list[tuple[int, int]]:
    """[(lo, hi)] sequence ranges covering 0..size, each about ``chunk_values`` values
    (``per_seq`` values a sequence), every range but the last a multiple of 16 values and the last
    at least 16 (or the whole block): the draws of one ``torch.randn`` in pieces."""
    unit = _NORMAL_BLOCK // math.gcd(per_seq, _NORMAL_BLOCK)  # sequences per 16-value multiple
    step = max(1, chunk_values // per_seq)
    step = -(-step // unit) * unit
    bounds = [(lo, min(size, lo + step)) for lo in range(0, size, step)]
    if len(bounds) > 1 and (bounds[-1][1] - bounds[-1][0]) * per_seq < _NORMAL_BLOCK:
        bounds[-2:] = [(bounds[-2][0], size)]  # a short tail would take the sampler's scalar path
    return bounds


def _draw(gen: torch.Generator, count: int, n: int, d: int) -> torch.Tensor:
    return torch.randn(count, n, d, generator=gen, dtype=torch.float64)


def _at(state: torch.Tensor) -> torch.Generator:
    gen = torch.Generator()
    gen.set_state(state)
    return gen


def _skipped(gen: torch.Generator, size: int, n: int, d: int, chunk_values: int):
    """A new generator where ``gen`` would be after drawing [size, n, d] (``gen`` untouched)."""
    ahead = _at(gen.get_state())
    for lo, hi in chunk_bounds(size, n * d, chunk_values):
        _draw(ahead, hi - lo, n, d)
    return ahead


def input_chunks(
    gen: torch.Generator,
    sizes: tuple[int, ...],
    n: int,
    d: int,
    chunk_values: int = CHUNK_VALUES,
    starts: list | None = None,
    noise: bool = True,
) -> Iterator[tuple[int, int, int, torch.Tensor, torch.Tensor | None]]:
    """(split, lo, hi, X, E) of every split in turn, X and E: [hi − lo, n, d] float64, for ``gen``
    at the start of the first split's X (advanced when the call draws; a replay of kept draws,
    or of known positions, leaves it where it was: no caller reads it after). The values are
    those of one ``randn`` per block in the order X₀, E₀, X₁, E₁, …; ``starts``, when given,
    receives the generator states where each split's X and E start, [(X₀, E₀), (X₁, E₁), …]
    (uint8 tensors: what a task file records to make a part of its data again,
    :func:`stored_chunks`).

    ``noise`` False (a task at σ = 0, whose Y does not read E): E is None and is not drawn. The
    positions are then found in one pass over each split's X (E's start is where X ends), not
    two, and the last split's E is never drawn; X is the same either way."""
    key = (hashlib.sha256(gen.get_state().numpy().tobytes()).digest(), tuple(sizes), n * d)
    known = _POSITIONS.get(key)
    drawn = _DRAWN.get((key, n, d, chunk_values, noise))
    if drawn is not None and known:  # the previous task of this stream drew them: bitwise equal
        yield from drawn
        if starts is not None:
            starts.extend(known)
        return
    keep = (1 + noise) * sum(sizes) * n * d <= DRAWN_MAX_VALUES
    _DRAWN.clear()
    record: list = []
    found: list[tuple[torch.Tensor, torch.Tensor]] = []
    gx = gen
    for split, size in enumerate(sizes):
        if known:
            gx, ge = _at(known[split][0]), _at(known[split][1])
        elif noise:
            ge = _skipped(gx, size, n, d, chunk_values)
            found.append((gx.get_state(), ge.get_state()))
        else:
            x_start = gx.get_state()
        for lo, hi in chunk_bounds(size, n * d, chunk_values):
            E = _draw(ge, hi - lo, n, d) if noise else None
            chunk = (split, lo, hi, _draw(gx, hi - lo, n, d), E)
            if keep:
                record.append(chunk)
            yield chunk
        if noise:
            gx = ge  # this split's E ends where the next split's X starts
        elif not known:  # X ends where E starts; the next split's X starts after E
            found.append((x_start, gx.get_state()))
            if split + 1 < len(sizes):
                gx = _skipped(gx, size, n, d, chunk_values)
    if keep:
        _DRAWN[(key, n, d, chunk_values, noise)] = record
    if not known:
        if len(_POSITIONS) >= _MAX_POSITIONS:
            _POSITIONS.pop(next(iter(_POSITIONS)))
        _POSITIONS[key] = found
    if starts is not None:
        starts.extend(known or found)


def stored_chunks(
    starts,
    sizes: tuple[int, ...],
    limits: tuple[int, ...],
    n: int,
    d: int,
    chunk_values: int,
    noise: bool = True,
) -> Iterator[tuple[int, int, int, torch.Tensor, torch.Tensor | None]]:
    """(split, lo, hi, X, E) as :func:`input_chunks` yields them, from the recorded ``starts``
    (generator states, as it records them), and only the chunks of each split that begin below
    ``limits[split]`` sequences: the first sequences of a split without drawing the rest (E None,
    not drawn, without ``noise``)."""
    for split, size in enumerate(sizes):
        gx, ge = _at(starts[split][0]), _at(starts[split][1])
        for lo, hi in chunk_bounds(size, n * d, chunk_values):
            if lo >= limits[split]:
                break
            E = _draw(ge, hi - lo, n, d) if noise else None
            yield split, lo, hi, _draw(gx, hi - lo, n, d), E


@contextlib.contextmanager
def one_thread():
    """Run torch on one thread inside the block. Its CPU kernels split work by thread count, and
    some splits round differently (measured: a 64 × 64 task's Y differs in its last bits at 2
    threads for L0, L3, L4, Lλ), so a task is always made on one thread, as the tasks stage has
    made every task file: a reader on any thread count makes the bits the file was made with."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


@dataclass
class Made:
    """What making a task's data gives: ``arrays`` (:data:`DATA_KEYS` -> [B, n, d] float32; those
    asked for), ``sha256`` (the hex digest of each array made whole, C order), ``chunk_sha256``
    (the digest of each chunk of X_train and Y_train, what a part of them is checked against;
    empty unless asked), ``clean_power`` (mean(Y_clean²) of the test split, from its float64
    clean targets) and ``starts`` (where each split's X and E start: :func:`input_chunks`)."""

    arrays: dict[str, np.ndarray]
    sha256: dict[str, str]
    chunk_sha256: dict[str, list[str]]
    clean_power: float
    starts: list = field(default_factory=list)


def _noisy(spec) -> bool:
    """Whether Y reads E: at σ = 0 it does not, and E is not drawn. Y + 0·E is Y bitwise (E is
    finite; only an exact zero of Y could change the sign of its zero, which the files' digests
    would catch), so the data are those made with E."""
    return spec.sigma != 0


def _made(spec, teacher, chunks, sizes, keep: bool, per_chunk: bool) -> Made:
    """Y = M(X) X V* + σE chunk by chunk over ``chunks`` ((split, lo, hi, X, E) in order), into
    float32 arrays of the splits' ``sizes`` (when ``keep``), with their digests (and those of the
    training split's chunks when ``per_chunk``)."""
    n, d = spec.n, spec.d
    names = [("X_train", "Y_train"), ("X_test", "Y_test")]
    arrays = {k: np.empty((sizes[i // 2], n, d), np.float32) for i, k in enumerate(DATA_KEYS)}
    if not keep:
        arrays = {}
    digests = {k: hashlib.sha256() for k in DATA_KEYS}
    chunk_digests: dict[str, list[str]] = {k: [] for k in DATA_KEYS}
    # the clean test targets in float64, whole: their mean square is one reduction over the split,
    # as it was when the split was made in one piece (a sum of chunk sums rounds differently)
    clean_test = torch.empty(sizes[1], n, d, dtype=torch.float64)
    for split, lo, hi, X, E in chunks:
        Y = apply_operator(spec.rung, X, teacher.kernel, teacher.V, beta=spec.beta, P=teacher.P)
        if split == 1:
            clean_test[lo:hi] = Y
        noisy = Y if E is None else Y + spec.sigma * E
        for name, value in zip(names[split], (X, noisy)):
            chunk = value.float().numpy()
            digests[name].update(chunk.data)
            if per_chunk and split == 0:
                chunk_digests[name].append(hashlib.sha256(chunk.data).hexdigest())
            if keep:
                arrays[name][lo:hi] = chunk
    clean_power = float(clean_test.pow(2).mean())
    return Made(arrays, {k: h.hexdigest() for k, h in digests.items()}, chunk_digests, clean_power)


@one_thread()
def generate_data(
    spec,
    teacher,
    gen: torch.Generator,
    *,
    keep: bool = True,
    per_chunk: bool = False,
    chunk_values: int = CHUNK_VALUES,
) -> Made:
    """The task's data from ``gen`` (at the start of X_train, just after the teacher's draws),
    whole (:class:`Made`; ``arrays`` empty unless ``keep``, ``chunk_sha256`` empty unless
    ``per_chunk``). ``teacher``: tasks.make.Teacher (kernel, V, P in float64)."""
    sizes = (spec.n_train, spec.n_test)
    starts: list = []
    chunks = input_chunks(
        gen, sizes, spec.n, spec.d, chunk_values, starts=starts, noise=_noisy(spec)
    )
    made = _made(spec, teacher, chunks, sizes, keep, per_chunk)
    made.starts = starts
    return made


@one_thread()
def generate_part(spec, teacher, starts, train: int, chunk_values: int) -> Made:
    """The first ``train`` training sequences of a task (the chunks that cover them: ``arrays``
    X_train/Y_train hold whole chunks) and its whole test split, from recorded ``starts``
    (:func:`input_chunks`): bitwise those of :func:`generate_data`, without drawing the rest.
    The training chunks are digested one by one only for a part (``train`` below the split's
    size); a whole split is checked by its whole digest alone, as :func:`generate_data`'s."""
    sizes = (spec.n_train, spec.n_test)
    covered = next(
        hi for lo, hi in chunk_bounds(spec.n_train, spec.n * spec.d, chunk_values) if hi >= train
    )
    limits = (covered, spec.n_test)
    chunks = stored_chunks(starts, sizes, limits, spec.n, spec.d, chunk_values, _noisy(spec))
    part = train < spec.n_train
    return _made(spec, teacher, chunks, (covered, spec.n_test), keep=True, per_chunk=part)
