"""The student layout: which task, seed and rank each row of a training batch is."""

import numpy as np

from entropic_bound.core.seeds import stream_seed
from entropic_bound.train.layout import StudentLayout


def student_stream_seed(base_seed, task_id, student_class, seed):
    return stream_seed(base_seed, task_id, student_class, seed, hashed=True)


def test_grid_order_by_hand():
    lay = StudentLayout.grid(["a", "b"], [7, 9], [1, 3], "L4")
    # row = ((t * 2) + seed_index) * 2 + rank_index
    assert lay.task.tolist() == [0, 0, 0, 0, 1, 1, 1, 1]
    assert lay.seed_index.tolist() == [0, 0, 1, 1, 0, 0, 1, 1]
    assert lay.rank.tolist() == [1, 3, 1, 3, 1, 3, 1, 3]
    assert lay.stream.tolist() == [0, 0, 1, 1, 2, 2, 3, 3]
    assert len(lay) == 8 and lay.max_rank == 3 and lay.n_streams == 4
    assert lay.describe(6) == "task b, rank 1, seed 9"
    assert lay.seed(3) == 9


def test_from_rows_orders_by_task_stably():
    lay = StudentLayout.from_rows(
        [(1, 0, 5), (0, 1, 2), (1, 1, 3), (0, 0, 4)], ["a", "b"], [0, 1], "L0"
    )
    assert lay.task.tolist() == [0, 0, 1, 1]
    assert lay.rank.tolist() == [2, 4, 5, 3]
    assert lay.describe(0) == "task a, rank 2, seed 1"


def test_stream_seed_is_a_pure_function_of_its_key():
    a = student_stream_seed(0, "L4_r2_s0", "L4", 1)
    assert a == student_stream_seed(0, "L4_r2_s0", "L4", 1)
    others = {
        student_stream_seed(1, "L4_r2_s0", "L4", 1),
        student_stream_seed(0, "L4_r2_s1", "L4", 1),
        student_stream_seed(0, "L4_r2_s0", "L0", 1),
        student_stream_seed(0, "L4_r2_s0", "L4", 0),
    }
    assert a not in others and len(others) == 4
    assert 0 <= a < 2**32 and isinstance(a, int)
    assert np.random.SeedSequence(a)  # usable as a seed
