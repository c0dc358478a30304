"""What the recommendation reads X and Y through, and how it refuses bad input.

A *source* is anything with ``shape``, ``dtype``, ``numeric``, ``where()``, ``check()`` and
``rows(k)`` (chunks of k rows along the first axis, with their start): :class:`ArraySource` for
arrays in memory (the Python API), the CLI's ``ArrayRef`` for files read in chunks
(cli/npyio.py). The recommendation (recommend.py) sees only this interface, never a file.

Bad input raises :class:`InputError`: what is wrong; what to do, in one line.
"""

from __future__ import annotations

import math

import numpy as np

#: elements per chunk read from disk (16 MB of float32): memory stays flat in B
CHUNK_ITEMS = 1 << 22


class InputError(ValueError):
    """A user error: ``what`` is wrong and ``todo`` says what to do about it."""

    def __init__(self, what: str, todo: str = ""):
        super().__init__(what + (f"; {todo}" if todo else ""))
        self.what, self.todo = what, todo


def rows_per_chunk(shape: tuple, extra: int = 0) -> int:
    """Rows of about CHUNK_ITEMS values (``extra``: working values per row beyond the row)."""
    return max(1, CHUNK_ITEMS // max(1, math.prod(shape[1:]) + extra))


class ArraySource:
    """An in-memory array with the interface of :class:`ArrayRef` (for the Python API)."""

    def __init__(self, array, name: str):
        self.array = np.asarray(array)
        self.name, self.shape, self.dtype = name, self.array.shape, self.array.dtype
        self.numeric = self.dtype.kind in "biuf" and not self.dtype.fields

    def where(self) -> str:
        return self.name

    def check(self) -> None:
        pass

    def rows(self, k: int):
        for start in range(0, self.shape[0] if self.shape else 0, k):
            yield start, self.array[start : start + k]
