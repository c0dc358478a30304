"""Which student each row of a training batch is (docs/method.md §4).

The engine trains students laid out along one flat axis; row ``s`` is the student of task
``task[s]`` (an index into the job's task list), student seed ``seeds[seed_index[s]]`` and rank
``rank[s]``. A rank sweep is the full grid tasks × seeds × ranks (:meth:`StudentLayout.grid`);
a rank search trains a different set of ranks on each task (:meth:`StudentLayout.from_rows`).

Randomness is drawn per *stream* (task, student seed): the initial factors and the minibatch
indices of a student depend on its stream only, never on the other rows of the layout, so a
student trains identically in a sweep, in a search round or alone.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class StudentLayout:
    """Rows of a training batch. ``task``, ``seed_index``, ``rank``: int arrays of length S."""

    task: np.ndarray
    seed_index: np.ndarray
    rank: np.ndarray
    task_ids: tuple[str, ...]
    seeds: tuple[int, ...]
    student_class: str

    @classmethod
    def from_rows(cls, rows, task_ids, seeds, student_class: str) -> StudentLayout:
        """From (task index, seed index, rank) triples, ordered by task (stable), as the
        engine's tables are."""
        grid = np.asarray(list(rows), dtype=np.int64).reshape(-1, 3)
        grid = grid[np.argsort(grid[:, 0], kind="stable")]
        return cls(grid[:, 0], grid[:, 1], grid[:, 2], tuple(task_ids), tuple(seeds), student_class)

    @classmethod
    def grid(cls, task_ids, seeds, ranks, student_class: str) -> StudentLayout:
        """The rank sweep: row s = ((t · n_seeds) + seed_index) · n_ranks + rank_index."""
        rows = [(t, j, r) for t in range(len(task_ids)) for j in range(len(seeds)) for r in ranks]
        return cls.from_rows(rows, task_ids, seeds, student_class)

    def __len__(self) -> int:
        return len(self.rank)

    @property
    def n_streams(self) -> int:
        return len(self.task_ids) * len(self.seeds)

    @property
    def stream(self) -> np.ndarray:
        """Stream index of each row: task · n_seeds + seed_index."""
        return self.task * len(self.seeds) + self.seed_index

    @property
    def max_rank(self) -> int:
        return int(self.rank.max())

    def seed(self, row: int) -> int:
        return self.seeds[int(self.seed_index[row])]

    def describe(self, row: int) -> str:
        """``task L4_r1_s0, rank 2, seed 1`` (for error messages)."""
        row = int(row)
        return (
            f"task {self.task_ids[int(self.task[row])]}, rank {int(self.rank[row])}, "
            f"seed {self.seed(row)}"
        )
