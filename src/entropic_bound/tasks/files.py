"""Task files: what a task's ``.npz`` holds, and reading one back (docs/method.md §1, "Task files").

Every task file holds the teacher (kernel, V, P, spectrum) and the meta. Its data X/Y (train and
test) are stored only where holding them is cheaper than making them (``task.store_data``,
:func:`stores_data`); a file without them holds instead the ``seeds`` of its stream and the
``data_sha256`` of each array, and :func:`load_task` makes the data again from the seeds,
chunk by chunk (tasks/data.py), checks the teacher they make against the stored one and the
data against the digests, and returns exactly what a file with data would have given.
"""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np

from entropic_bound.core.rungs import kernel_dim, parse_rung
from entropic_bound.tasks.grid import TaskSpec
from entropic_bound.tasks.keys import CHUNK_VALUES, DATA_KEYS, PART_KEYS  # noqa: F401  re-exported

#: task.store_data: ``auto`` stores a task's data when they take at most AUTO_STORE_MAX_MB
#: (the paper config's 12.6 MB a task are stored; config/large.yaml's 192 MB are made again)
STORE_MODES = ("auto", "always", "never")
#: the size (MB, float32 X and Y of both splits) up to which ``auto`` stores a task's data: the
#: paper and scale configs up to d = 32 (50 MB) keep their files; from d = 48 on, B = 4·n·d makes
#: a task hundreds of MB, where 36 tasks held on disk would pass the 8 GB a run may take, and
#: making them again costs seconds (a few passes of the normal sampler and one operator product)
AUTO_STORE_MAX_MB = 64
#: what every task file holds; one without data adds SEED_KEYS
TEACHER_KEYS = ("kernel", "V", "P", "meta")
SEED_KEYS = ("seeds", "data_sha256")
#: the meta keys that name the stream: ``seeds`` must equal them, in this order
SEED_META = ("base_seed", "r_star", "seed")
#: the TaskSpec fields a meta must give as integers (≥ 1 where a size), reals, and words
_INT_FIELDS = ("r_star", "seed", "n", "d", "n_train", "n_test", "base_seed")
_SIZE_FIELDS = ("r_star", "n", "d", "n_train", "n_test")
_REAL_FIELDS = ("gain", "kappa", "beta", "sigma")
VALUE_MAPS = ("unknown", "known")


def data_mb(spec: TaskSpec) -> float:
    """MB of a task's data as stored: X and Y, train and test, float32."""
    return 2 * (spec.n_train + spec.n_test) * spec.n * spec.d * 4 / 2**20


def stores_data(spec: TaskSpec, mode: str = "auto") -> bool:
    """Whether ``task.store_data`` = ``mode`` puts the task's X/Y into its file."""
    if mode not in STORE_MODES:
        raise ValueError(f"task.store_data is {mode!r}; use one of {', '.join(STORE_MODES)}")
    return mode == "always" or (mode == "auto" and data_mb(spec) <= AUTO_STORE_MAX_MB)


def task_file_arrays(
    spec: TaskSpec, mode: str = "auto", chunk_values: int = CHUNK_VALUES
) -> dict[str, np.ndarray]:
    """The arrays of the task's file: :func:`tasks.make.make_task`'s when the data are stored,
    else the teacher, the meta, the seeds, the data's digests and :data:`PART_KEYS` (the data are
    made once, in chunks, to digest them and to find the test split's clean power, and not
    kept; ``chunk_values``: their chunk size, tasks/data.py)."""
    from entropic_bound.tasks.data import generate_data
    from entropic_bound.tasks.make import draw_teacher, make_task, teacher_arrays
    from entropic_bound.tasks.parts import part_arrays

    if stores_data(spec, mode):
        return make_task(spec)
    teacher, gen = draw_teacher(spec)
    made = generate_data(spec, teacher, gen, keep=False, per_chunk=True, chunk_values=chunk_values)
    return {
        **teacher_arrays(spec, teacher, made.clean_power),
        "seeds": np.array([getattr(spec, k) for k in SEED_META], dtype=np.int64),
        "data_sha256": np.array([made.sha256[k] for k in DATA_KEYS]),
        **part_arrays(made, chunk_values),
    }


def load_task(path, train: int | None = None) -> tuple[dict[str, np.ndarray], dict]:
    """Read a task ``.npz``: (arrays, meta), the data made again from the seeds when the file does
    not hold them. Raises ValueError naming what is wrong. The members are read by numpy (the
    pipeline's own files); how they make a task is :func:`read_task`'s. ``train``: the caller
    reads only the first ``train`` training sequences (see :func:`read_task`)."""
    try:
        z = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise ValueError(f"task file {path} does not exist") from None
    except Exception as exc:  # zip/npy format errors come in many types
        raise ValueError(f"task file {path} is not a readable .npz ({exc})") from None
    if not isinstance(z, np.lib.npyio.NpzFile):
        raise ValueError(f"task file {path} is not a readable .npz (a single array)")

    def read(name: str, shape: tuple | None) -> np.ndarray:
        try:
            return z[name]
        except Exception as exc:  # noqa: BLE001 - a damaged member, whatever numpy raises
            raise ValueError(f"task file {path} is not a readable .npz ({exc})") from None

    with z:
        return read_task(path, list(z.files), read, train=train)


def seed_only(names) -> bool:
    """Whether a file with these members is a task file without its data: no X/Y, and the seeds
    (or one of them) or the whole teacher instead. Such a file is read by :func:`read_task`."""
    names = set(names)
    if names & set(DATA_KEYS):
        return False
    return bool(names & set(SEED_KEYS)) or set(TEACHER_KEYS) <= names


def read_task(path, names, read, *, available: int | None = None, train: int | None = None):
    """The one definition of reading a task file, whoever reads its members: (arrays, meta), the
    data made again from the seeds when the file does not hold them (ValueError: what is wrong).

    ``names``: the file's members, in order; ``read(name, shape)``: a member's array, ``shape``
    the one it must have (None: the reader bounds its size; the meta, the seeds and the digests
    are small). A file without data is checked before its teacher is read or anything is made:
    its meta and seeds must name a well-formed task, and making its data must fit in
    ``available`` bytes (None: not checked; :func:`making_bytes`). A file without data that
    records its streams (:data:`PART_KEYS`) is made from them, checked chunk by chunk, without
    the draws that find where each split's E starts; ``train``: the caller reads only the first
    ``train`` training sequences, and of such a file only those are made (X_train/Y_train hold
    just them; None: all; a file with data, or without the records, returns all of them)."""
    held = [k for k in DATA_KEYS if k in names]
    # a file with data needs all of it and the teacher; one without, the teacher and the seeds
    need = (*DATA_KEYS, *TEACHER_KEYS) if held else TEACHER_KEYS
    missing = [k for k in need if k not in names]
    if missing:
        raise ValueError(f"task file {path} lacks {', '.join(missing)}")
    meta = _meta_of(path, read("meta", None))
    rest = [k for k in names if k != "meta" and k not in (*SEED_KEYS, *PART_KEYS)]
    if held:
        arrays = {k: read(k, None) for k in rest}
    else:
        seeds = {k: read(k, None) for k in SEED_KEYS if k in names}
        spec = _spec_of(path, meta, seeds)
        _check_memory(path, spec, available)
        shapes = teacher_shapes(spec)
        arrays = {k: read(k, shapes.get(k)) for k in rest}
        part = None  # a file that records its streams is made from them, in full or in part
        if any(k in names for k in PART_KEYS):
            wanted = spec.n_train if train is None else max(1, min(train, spec.n_train))
            part = (wanted, {k: read(k, None) for k in PART_KEYS if k in names})
        # in the order of a file that holds them: data first
        arrays = {**_made_again(path, arrays, meta, seeds, spec, part), **arrays}
    for k in DATA_KEYS:
        a = arrays[k]
        if a.ndim != 3 or a.shape[1:] != (meta["n"], meta["d"]):
            raise ValueError(
                f"task file {path}: {k} has shape {a.shape}, expected [B, {meta['n']}, {meta['d']}]"
            )
        if not np.all(np.isfinite(a)):
            raise ValueError(f"task file {path}: {k} contains NaN or Inf")
    return arrays, meta


def teacher_shapes(spec: TaskSpec) -> dict[str, tuple[int, ...]]:
    """The shapes of a task's teacher arrays as its file holds them."""
    k = kernel_dim(spec.rung, spec.n, spec.d)
    return {
        "kernel": (k, k),
        "V": (spec.d, spec.d),
        "P": (spec.n, spec.d),
        "spectrum": (spec.r_star,),
    }


def making_bytes(spec: TaskSpec) -> int:
    """Peak bytes of making a task's data again (tasks/data.py): X and Y of both splits in
    float32, the test split's clean targets in float64, the teacher, and a chunk's working arrays
    (a few float64 copies of its X and the operator's n × n mixing per sequence)."""
    n, d = spec.n, spec.d
    k = kernel_dim(spec.rung, n, d)
    per_chunk = max(1, CHUNK_VALUES // (n * d))
    data = 2 * 4 * (spec.n_train + spec.n_test) * n * d + 8 * spec.n_test * n * d
    teacher = 8 * (3 * k * k + 3 * d * d + 2 * n * d)
    return data + teacher + 8 * 8 * per_chunk * (n * n + n * d)


def _check_memory(path, spec: TaskSpec, available: int | None) -> None:
    if available is None:
        return
    need = making_bytes(spec)
    if need > available:
        raise ValueError(
            f"task file {path}: making its data again from its seeds ({spec.n_train} + "
            f"{spec.n_test} sequences of n = {spec.n}, d = {spec.d}) needs ≈ {need / 1e9:.3g} GB, "
            f"more than the ≈ {available / 1e9:.1f} GB available; read it on a larger machine "
            "(if its meta is right) or make it again with the tasks stage"
        )


def task_meta(path) -> dict:
    """A task file's meta alone (no data made): its id, rung, sizes and σ."""
    try:
        with np.load(path, allow_pickle=False) as z:
            raw = z["meta"]
    except Exception as exc:  # noqa: BLE001 - a missing or damaged file, whatever numpy raises
        raise ValueError(f"task file {path} is not a readable .npz ({exc})") from None
    return _meta_of(path, raw)


def _meta_of(path, raw) -> dict:
    """The meta member: one JSON object."""
    try:
        if not isinstance(raw, np.ndarray) or raw.shape or raw.dtype.kind not in "US":
            raise ValueError
        meta = json.loads(str(raw))
        if not isinstance(meta, dict):
            raise ValueError
    except ValueError:
        raise ValueError(
            f"task file {path}: its meta is not one JSON object (a string); "
            "the file is corrupted: make it again"
        ) from None
    return meta


def _made_again(
    path, arrays: dict, meta: dict, seeds: dict, spec, part=None
) -> dict[str, np.ndarray]:
    """The data of a file that holds ``seeds`` (SEED_KEYS) instead, checked against its teacher
    and digests; ``part``: (the training sequences wanted, the file's PART_KEYS members), to make
    them and the test split from the recorded streams (tasks/parts.py)."""
    from entropic_bound.tasks.data import generate_data
    from entropic_bound.tasks.make import draw_teacher
    from entropic_bound.tasks.parts import made_part

    teacher, gen = draw_teacher(spec)
    for key, made in (("kernel", teacher.kernel), ("V", teacher.V), ("P", teacher.P)):
        if not np.array_equal(made.float().numpy(), arrays[key]):
            raise ValueError(
                f"task file {path}: its seeds and meta do not make its teacher ({key} differs); "
                "the file is corrupted: make it again (delete it and rerun the tasks stage)"
            )
    stored = [str(h) for h in seeds["data_sha256"]]
    if part is not None:
        made, differ = made_part(path, spec, teacher, part, stored)
    else:
        made = generate_data(spec, teacher, gen)
        differ = [k for k in DATA_KEYS if made.sha256[k] != stored[DATA_KEYS.index(k)]]
    if differ or made.clean_power != meta.get("test_clean_power"):
        raise ValueError(
            f"task file {path}: the data made again from its seeds differ from those the tasks "
            f"stage made ({', '.join(differ) or 'test_clean_power'}): this machine's arithmetic "
            "is not the one that wrote the file; rerun the tasks stage here, or set "
            "task.store_data: always"
        )
    return made.arrays


def _spec_of(path, meta: dict, seeds: dict) -> TaskSpec:
    """The task's spec from its meta, once the seed fields are present, well formed and equal to
    the meta's (base seed, r*, seed)."""
    absent = [k for k in SEED_KEYS if k not in seeds]
    if absent:
        raise ValueError(
            f"task file {path} holds neither its data ({', '.join(DATA_KEYS)}) nor the seeds to "
            f"make them ({', '.join(absent)} missing); make it again with the tasks stage"
        )
    fields = [f.name for f in dataclasses.fields(TaskSpec)]
    lacking = [k for k in fields if k not in meta]
    if lacking:
        raise ValueError(f"task file {path}: its meta lacks {', '.join(lacking)}")
    wrong = _ill_typed(meta)
    if wrong:
        raise ValueError(
            f"task file {path}: its meta gives {', '.join(wrong)}, which no task has (integers, "
            f"sizes >= 1, finite reals, a rung, value_map {' or '.join(VALUE_MAPS)}); the file "
            "is corrupted: make it again"
        )
    want = tuple(meta[k] for k in SEED_META)
    got, digests = seeds["seeds"], seeds["data_sha256"]
    if got.shape != (len(SEED_META),) or got.dtype.kind not in "iu" or tuple(got) != want:
        raise ValueError(
            f"task file {path}: its seeds field {got.tolist()!r} is not the stream of its meta "
            f"(base seed, r*, seed) = {want}; the file is corrupted: make it again"
        )
    if digests.shape != (len(DATA_KEYS),) or digests.dtype.kind != "U":
        raise ValueError(
            f"task file {path}: its data_sha256 field is not {len(DATA_KEYS)} digests; "
            "the file is corrupted: make it again"
        )
    return TaskSpec(**{k: meta[k] for k in fields})


def _ill_typed(meta: dict) -> list[str]:
    """The spec fields of a meta whose values no task has (``name = value``, one each)."""

    def ok(key, v) -> bool:
        if key in _INT_FIELDS:
            return type(v) is int and (v >= 1 if key in _SIZE_FIELDS else abs(v) < 2**63)
        if key in _REAL_FIELDS:
            return type(v) in (int, float) and math.isfinite(v)
        if key == "value_map":
            return v in VALUE_MAPS
        try:
            return isinstance(v, str) and bool(parse_rung(v))
        except ValueError:
            return False

    fields = [*_INT_FIELDS, *_REAL_FIELDS, "value_map", "rung"]
    return [f"{k} = {meta[k]!r}" for k in fields if not ok(k, meta[k])]


def write_gram(path, gram: np.ndarray, task_ids=()) -> None:
    """``path`` (.npz): Σ xᵀx over x = vec(X_i) of a training split (``gram``, unnormalised) and
    the ``task_ids`` whose X it is: what P_static forms (predict/stage.py), written once per
    stream so that the static rungs' best bounds read it (bounds/best.py) instead of forming it
    again."""
    with open(path, "wb") as fh:  # the name as given (np.savez would add .npz)
        np.savez(fh, gram=gram, task_ids=np.asarray(list(task_ids), dtype=str))


def read_gram(path, task_id: str):
    """``write_gram``'s Σ xᵀx for ``task_id`` as a float64 tensor, or None if it is not that
    task's X."""
    import torch

    with np.load(path, allow_pickle=False) as z:
        if task_id not in set(z["task_ids"].tolist()):
            return None
        return torch.from_numpy(z["gram"])
