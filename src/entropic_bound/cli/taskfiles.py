"""A task file without its data (``task.store_data: never``, or ``auto`` over its size limit):
it holds the teacher and the seeds of X/Y. The CLI reads its members with its own bounded reader
(:mod:`.npyio`: each header checked, each member's size bounded before it is read) and hands
them to the tasks package's one definition of reading a task file
(:func:`entropic_bound.tasks.files.read_task`), which checks the meta and the seeds, plans the
memory of making the data before anything is allocated, and makes the data again bitwise."""

from __future__ import annotations

import numpy as np

from entropic_bound.cli.npyio import (
    SMALL_BYTES,
    ArrayRef,
    ArraySource,
    InputError,
    iter_rows,
    rows_per_chunk,
)
from entropic_bound.tasks.files import DATA_KEYS, read_task  # torch-free

MADE_AGAIN = "made again from its seeds"


def made_again(path: str, refs: dict[str, ArrayRef], available: int | None = -1):
    """(X/Y of both splits as array sources, meta) of a task file without its data.
    ``available``: the bytes making them may take (-1: ask the machine; None: unchecked)."""
    from entropic_bound.predict.scan import available_memory

    damaged = next((r for r in refs.values() if r.damaged), None)
    if damaged is not None:  # sizes that contradict each other: no member of it is trusted
        raise InputError(damaged.problem, "re-create the file")

    def read(name: str, shape: tuple | None) -> np.ndarray:
        return _read_member(refs[name], shape)

    memory = available_memory() if available == -1 else available
    try:
        arrays, meta = read_task(path, list(refs), read, available=memory)
    except InputError:
        raise
    except ValueError as exc:  # the tasks package's message names the file and what to do
        raise InputError(str(exc)) from None
    sources = {k: ArraySource(arrays[k], f"{k} in {path} ({MADE_AGAIN})") for k in DATA_KEYS}
    return sources, meta


def _read_member(ref: ArrayRef, shape: tuple | None) -> np.ndarray:
    """One member, whole: of ``shape`` (a float32 teacher array) when given, else small (at most
    SMALL_BYTES: the meta, the seeds, the digests); checked from its header before it is read."""
    ref.check()
    if ref.dtype is None or ref.dtype.hasobject or ref.dtype.fields:
        raise InputError(f"{ref.where()} has dtype {ref.dtype}", "the file is corrupted")
    if shape is not None and (tuple(ref.shape) != tuple(shape) or not ref.numeric):
        raise InputError(
            f"{ref.where()} has shape {tuple(ref.shape)} and dtype {ref.dtype}, but the task "
            f"its meta names has a {ref.name} of shape {tuple(shape)}",
            "the file is corrupted: make it again with the tasks stage",
        )
    if shape is None and ref.nbytes > SMALL_BYTES:
        raise InputError(
            f"{ref.where()} holds {ref.nbytes} bytes, more than a task file's {ref.name} can "
            f"({SMALL_BYTES})",
            "the file is corrupted: make it again with the tasks stage",
        )
    blocks = [b for _, b in iter_rows(ref, rows_per_chunk(ref.shape))]
    if not blocks:
        return np.empty(ref.shape, ref.dtype)
    return np.concatenate(blocks).reshape(ref.shape)
