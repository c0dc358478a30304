"""The names and sizes that the task modules share (torch-free, importing nothing of the
project): what a task file's data arrays are called, the members a file without data records
for reading a part, and the chunk size of generation. files.py (reading), data.py (generation)
and parts.py (a part of the data) all read them here, so none of them imports another to get
them (no import cycle)."""

from __future__ import annotations

#: the data arrays of a task, in the order the stream draws them (X and Y of train, then test);
#: this module stays torch-free (the workflow reads it when it builds the DAG): the generation
#: is tasks/data.py
DATA_KEYS = ("X_train", "Y_train", "X_test", "Y_test")
#: what a file without data records besides, so that a reader of its first training sequences
#: makes only those and the test split (tasks/parts.py): where each split's X and E start in the
#: stream, the digest of each chunk of X_train and Y_train, and the chunk size they were made in
PART_KEYS = ("streams", "chunk_sha256", "chunk_values")
#: values per float64 array of a chunk of generation (tasks/data.py): 2²¹ (16 MB, 512 sequences
#: at n = d = 64); a chunk's arrays and the operator's intermediates stay under ~150 MB at n = d
CHUNK_VALUES = 1 << 21
