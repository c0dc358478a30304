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

import numpy as np

from entropic_bound.tasks.grid import TaskSpec

#: task.store_data: ``auto`` stores a task's data when they take at most AUTO_STORE_MAX_MB
#: (the paper config's 12.6 MB a task are stored; config/large.yaml's 192 MB are made again)
STORE_MODES = ("auto", "always", "never")
#: the size (MB, float32 X and Y of both splits) up to which ``auto`` stores a task's data: the
#: paper and scale configs up to d = 32 (50 MB) keep their files; from d = 48 on, B = 4·n·d makes
#: a task hundreds of MB, where 36 tasks held on disk would pass the 8 GB a run may take, and
#: making them again costs seconds (a few passes of the normal sampler and one operator product)
AUTO_STORE_MAX_MB = 64
#: the data arrays of a task, in the order the stream draws them (X and Y of train, then test);
#: this module stays torch-free (the workflow reads it when it builds the DAG): the generation
#: is tasks/data.py
DATA_KEYS = ("X_train", "Y_train", "X_test", "Y_test")
#: what every task file holds; one without data adds SEED_KEYS
TEACHER_KEYS = ("kernel", "V", "P", "meta")
SEED_KEYS = ("seeds", "data_sha256")
#: the meta keys that name the stream: ``seeds`` must equal them, in this order
SEED_META = ("base_seed", "r_star", "seed")


def data_mb(spec: TaskSpec) -> float:
    """MB of a task's data as stored: X and Y, train and test, float32."""
    return 2 * (spec.n_train + spec.n_test) * spec.n * spec.d * 4 / 2**20


def stores_data(spec: TaskSpec, mode: str = "auto") -> bool:
    """Whether ``task.store_data`` = ``mode`` puts the task's X/Y into its file."""
    if mode not in STORE_MODES:
        raise ValueError(f"task.store_data is {mode!r}; use one of {', '.join(STORE_MODES)}")
    return mode == "always" or (mode == "auto" and data_mb(spec) <= AUTO_STORE_MAX_MB)


def task_file_arrays(spec: TaskSpec, mode: str = "auto") -> dict[str, np.ndarray]:
    """The arrays of the task's file: :func:`tasks.make.make_task`'s when the data are stored,
    else the teacher, the meta, the seeds and the data's digests (the data are made once, in
    chunks, to digest them and to find the test split's clean power, and not kept)."""
    from entropic_bound.tasks.data import generate_data
    from entropic_bound.tasks.make import draw_teacher, make_task, teacher_arrays

    if stores_data(spec, mode):
        return make_task(spec)
    teacher, gen = draw_teacher(spec)
    _, digests, clean_power = generate_data(spec, teacher, gen, keep=False)
    return {
        **teacher_arrays(spec, teacher, clean_power),
        "seeds": np.array([getattr(spec, k) for k in SEED_META], dtype=np.int64),
        "data_sha256": np.array([digests[k] for k in DATA_KEYS]),
    }


def load_task(path) -> tuple[dict[str, np.ndarray], dict]:
    """Read a task ``.npz``: (arrays, meta), the data made again from the seeds when the file does
    not hold them. Raises ValueError naming what is wrong."""
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except FileNotFoundError:
        raise ValueError(f"task file {path} does not exist") from None
    except Exception as exc:  # zip/npy format errors come in many types
        raise ValueError(f"task file {path} is not a readable .npz ({exc})") from None
    held = [k for k in DATA_KEYS if k in arrays]
    # a file with data needs all of it and the teacher; one without, the teacher and the seeds
    need = (*DATA_KEYS, *TEACHER_KEYS) if held else TEACHER_KEYS
    missing = [k for k in need if k not in arrays]
    if missing:
        raise ValueError(f"task file {path} lacks {', '.join(missing)}")
    meta = json.loads(str(arrays.pop("meta")))
    seeds = {k: arrays.pop(k) for k in SEED_KEYS if k in arrays}
    if not held:  # in the order of a file that holds them: data first
        arrays = {**_made_again(path, arrays, meta, seeds), **arrays}
    for k in DATA_KEYS:
        a = arrays[k]
        if a.ndim != 3 or a.shape[1:] != (meta["n"], meta["d"]):
            raise ValueError(
                f"task file {path}: {k} has shape {a.shape}, expected [B, {meta['n']}, {meta['d']}]"
            )
        if not np.all(np.isfinite(a)):
            raise ValueError(f"task file {path}: {k} contains NaN or Inf")
    return arrays, meta


def _made_again(path, arrays: dict, meta: dict, seeds: dict) -> dict[str, np.ndarray]:
    """The data of a file that holds ``seeds`` (SEED_KEYS) instead, checked against its teacher
    and digests."""
    from entropic_bound.tasks.data import generate_data
    from entropic_bound.tasks.make import draw_teacher

    spec = _spec_of(path, meta, seeds)
    teacher, gen = draw_teacher(spec)
    for key, made in (("kernel", teacher.kernel), ("V", teacher.V), ("P", teacher.P)):
        if not np.array_equal(made.float().numpy(), arrays[key]):
            raise ValueError(
                f"task file {path}: its seeds and meta do not make its teacher ({key} differs); "
                "the file is corrupted: make it again (delete it and rerun the tasks stage)"
            )
    data, digests, clean_power = generate_data(spec, teacher, gen)
    differ = [k for k in DATA_KEYS if digests[k] != str(seeds["data_sha256"][DATA_KEYS.index(k)])]
    if differ or clean_power != meta.get("test_clean_power"):
        raise ValueError(
            f"task file {path}: the data made again from its seeds differ from those the tasks "
            f"stage made ({', '.join(differ) or 'test_clean_power'}): this machine's arithmetic "
            "is not the one that wrote the file; rerun the tasks stage here, or set "
            "task.store_data: always"
        )
    return data


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
