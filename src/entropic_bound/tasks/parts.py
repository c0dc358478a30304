"""Part of a task's data made again (docs/method.md §1, "Task files"): the first training
sequences and the test split of a file without data, from the stream positions it records.

A reader that needs only the first B' training sequences (the bounds stage: ``bounds.n_seqs`` of
them, and the test split) would otherwise make the whole training split: at d = n = 64 with
B = 16 384 and B' = 1024, six sevenths of the work of a load. So the tasks stage records in a
file without data (:data:`~entropic_bound.tasks.files.PART_KEYS`) where each split's X and E
start in the task's stream (four generator states), the digest of each chunk of X_train and
Y_train, and the chunk size. A part is drawn from those states (tasks/data.py,
:func:`~entropic_bound.tasks.data.generate_part`), bitwise the rows of the whole data, and
checked chunk by chunk; the test split is made whole and checked against ``data_sha256``.
"""

from __future__ import annotations

import numpy as np
import torch

from entropic_bound.tasks.data import CHUNK_VALUES, Made, chunk_bounds, generate_part
from entropic_bound.tasks.keys import DATA_KEYS, PART_KEYS

#: the generator states of a task file, in order: X_train, E_train, X_test, E_test
STREAMS = 4
#: the splits whose chunks a file digests one by one
PART_DATA = ("X_train", "Y_train")


def part_arrays(made: Made, chunk_values: int = CHUNK_VALUES) -> dict[str, np.ndarray]:
    """The PART_KEYS members of a task file, from :func:`generate_data` of the whole task (with
    ``per_chunk``) made in chunks of ``chunk_values`` values."""
    states = [state.numpy() for pair in made.starts for state in pair]
    return {
        "streams": np.stack(states),
        "chunk_sha256": np.array([made.chunk_sha256[k] for k in PART_DATA]),
        "chunk_values": np.array(chunk_values, dtype=np.int64),
    }


def _corrupt(path, what: str) -> ValueError:
    return ValueError(f"task file {path}: its {what}; the file is corrupted: make it again")


def _checked(path, spec, members: dict) -> tuple[int, list, np.ndarray]:
    """(chunk size, generator states, chunk digests [2, chunks]) of well-formed members."""
    missing = [k for k in PART_KEYS if k not in members]
    if missing:
        raise ValueError(
            f"task file {path} lacks {', '.join(missing)} (it records the rest of "
            f"{', '.join(PART_KEYS)}); the file is corrupted: make it again"
        )
    values = members["chunk_values"]
    if (
        not isinstance(values, np.ndarray)
        or values.shape
        or values.dtype.kind not in "iu"
        or not 16 <= int(values) <= CHUNK_VALUES
    ):
        raise _corrupt(path, f"chunk_values is not one integer in 16..{CHUNK_VALUES}")
    size = torch.Generator().get_state().numel()
    streams = members["streams"]
    if (
        not isinstance(streams, np.ndarray)
        or streams.dtype != np.uint8
        or streams.shape != (STREAMS, size)
    ):
        raise _corrupt(path, f"streams field is not {STREAMS} generator states of {size} bytes")
    chunks = len(chunk_bounds(spec.n_train, spec.n * spec.d, int(values)))
    digests = members["chunk_sha256"]
    if (
        not isinstance(digests, np.ndarray)
        or digests.dtype.kind != "U"
        or digests.shape != (len(PART_DATA), chunks)
    ):
        raise _corrupt(path, f"chunk_sha256 field is not {len(PART_DATA)} × {chunks} digests")
    states = [torch.from_numpy(s.copy()) for s in streams]
    return int(values), [(states[0], states[1]), (states[2], states[3])], digests


def made_part(path, spec, teacher, part: tuple, stored: list[str]) -> tuple[Made, list[str]]:
    """The first ``part[0]`` training sequences and the whole test split of the task, from its
    file's PART_KEYS members ``part[1]``, and the names of the arrays that differ from what the
    file records (the chunk digests of a part of the training split, the ``stored`` whole digests
    of the test split and of a whole training split): (:class:`Made` with X_train/Y_train of
    ``part[0]`` rows, differing names)."""
    train, members = part
    values, starts, digests = _checked(path, spec, members)
    try:
        made = generate_part(spec, teacher, starts, train, values)
    except RuntimeError:  # torch refuses a state that is no generator's
        raise _corrupt(path, "streams field holds a state no generator can take") from None
    # a part of the training split by its chunks' digests; a whole split by its whole digest
    done = len(made.chunk_sha256[PART_DATA[0]])
    differ = [
        k
        for i, k in enumerate(PART_DATA)
        if made.chunk_sha256[k] != [str(h) for h in digests[i, :done]]
    ]
    whole = DATA_KEYS if train >= spec.n_train else DATA_KEYS[2:]
    differ += [k for k in whole if made.sha256[k] != stored[DATA_KEYS.index(k)]]
    for k in PART_DATA:
        made.arrays[k] = made.arrays[k][:train]
    return made, differ
