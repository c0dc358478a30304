"""Part of a task's data made again (tasks/parts.py): the first training sequences and the test
split of a file without data are bitwise the rows of the whole data, made without the rest, and
checked chunk by chunk; a file whose recorded streams or digests are wrong fails in one line."""

import numpy as np
import pytest
from fabricate import task_file_without_data
from hypothesis import given, settings
from hypothesis import strategies as st

from entropic_bound.core.io import write_npz
from entropic_bound.tasks import data as task_data
from entropic_bound.tasks.data import chunk_bounds
from entropic_bound.tasks.files import DATA_KEYS, PART_KEYS, load_task, task_file_arrays
from entropic_bound.tasks.make import TaskSpec

#: 48 values a chunk: at n = 6, d = 4 that is 2 sequences, so B = 40 makes 20 chunks
SMALL = dict(n=6, d=4, n_train=40, n_test=24)
CHUNK = 48


def _file(tmp_path, spec, chunk=CHUNK, **change):
    arrays = task_file_arrays(spec, "never", chunk_values=chunk)
    for key, value in change.items():
        if value is None:
            del arrays[key]
        else:
            arrays[key] = value
    write_npz(tmp_path / "t.npz", **arrays)
    return tmp_path / "t.npz"


def _assert_rows(part: dict, whole: dict, train: int):
    assert list(part) == list(whole)
    for k, a in whole.items():
        want = a[:train] if k in ("X_train", "Y_train") else a
        assert part[k].dtype == want.dtype and np.array_equal(part[k], want), k


@settings(max_examples=25, deadline=None)
@given(
    rung=st.sampled_from(["L0", "L1", "L2", "L3", "L4", "Lam0.50"]),
    sigma=st.sampled_from([0.0, 0.1]),
    train=st.integers(1, 39),
    chunk_values=st.sampled_from([16, CHUNK, 100, 1 << 21]),
)
def test_the_first_training_sequences_are_the_rows_of_the_whole_data(
    tmp_path_factory, rung, sigma, train, chunk_values
):
    spec = TaskSpec(rung=rung, r_star=2, seed=1, sigma=sigma, **SMALL)
    folder = tmp_path_factory.mktemp("t")
    path = _file(folder, spec, chunk_values)
    write_npz(folder / "with.npz", **task_file_arrays(spec, "always"))  # the data, stored
    (whole, meta), (part, meta_part) = load_task(folder / "with.npz"), load_task(path, train=train)
    assert meta_part == meta
    _assert_rows(part, whole, train)


# per draw of X and E (E: not at σ = 0), the values drawn: a part, the whole task from its recorded
# streams, and the whole task without them (σ > 0: X again to find E; σ = 0: E_train passed once)
@pytest.mark.parametrize(
    "sigma, part, whole, without",
    [(0.1, 2 * 4 + 2 * 24, 2 * 40 + 2 * 24, 3 * 40 + 3 * 24), (0.0, 4 + 24, 40 + 24, 2 * 40 + 24)],
)
def test_a_part_draws_only_the_chunks_it_needs(tmp_path, monkeypatch, sigma, part, whole, without):
    spec = TaskSpec(rung="L3", r_star=2, seed=0, sigma=sigma, **SMALL)
    path = _file(tmp_path, spec)
    drawn = []
    draw = task_data._draw
    monkeypatch.setattr(task_data, "_POSITIONS", {})
    monkeypatch.setattr(
        task_data, "_draw", lambda g, count, n, d: drawn.append(count) or draw(g, count, n, d)
    )
    load_task(path, train=3)  # chunks of 2 sequences: 2 of X and 2 of E, then the test split
    assert sum(drawn) == part
    drawn.clear()
    load_task(path)  # the whole task, from the recorded streams: each split's X and E once
    assert sum(drawn) == whole
    no_streams = _file(tmp_path, spec, streams=None, chunk_sha256=None, chunk_values=None)
    drawn.clear()
    task_data._POSITIONS.clear()  # as in a fresh process
    load_task(no_streams)  # without them, the positions are found first
    assert sum(drawn) == without


def test_a_file_records_its_streams_and_chunk_digests():
    spec = TaskSpec(rung="L4", r_star=2, seed=1, **SMALL)
    arrays = task_file_arrays(spec, "never", chunk_values=CHUNK)
    assert set(PART_KEYS) <= set(arrays)
    chunks = len(chunk_bounds(40, 24, CHUNK))
    assert arrays["streams"].shape == (4, 5056) and arrays["streams"].dtype == np.uint8
    assert arrays["chunk_sha256"].shape == (2, chunks) == (2, 20)
    assert int(arrays["chunk_values"]) == CHUNK


@pytest.mark.parametrize("train", [None, 40, 1000])
def test_all_of_the_training_split_is_the_whole_load(tmp_path, train):
    spec = TaskSpec(rung="L2", r_star=2, seed=0, **SMALL)
    path = _file(tmp_path, spec)
    arrays, _ = load_task(path, train=train)
    whole, _ = load_task(_file(tmp_path, spec, streams=None, chunk_sha256=None, chunk_values=None))
    _assert_rows(arrays, whole, 40)


def test_a_file_without_streams_makes_the_whole_task(tmp_path):
    spec = TaskSpec(rung="L1", r_star=2, seed=0, **SMALL)
    path = _file(tmp_path, spec, streams=None, chunk_sha256=None, chunk_values=None)
    whole, _ = load_task(path)
    part, _ = load_task(path, train=5)
    assert part["X_train"].shape[0] == 40 and np.array_equal(part["Y_train"], whole["Y_train"])


def _digests(spec, row, col):
    good = task_file_arrays(spec, "never", chunk_values=CHUNK)["chunk_sha256"].copy()
    good[row, col] = "0" * 64
    return good


@pytest.mark.parametrize(
    "change, says",
    [
        ({"chunk_values": None}, "lacks chunk_values"),
        ({"streams": None}, "lacks streams"),
        ({"chunk_values": np.array(8)}, "chunk_values is not one integer in 16..2097152"),
        ({"chunk_values": np.array(1 << 30)}, "chunk_values is not one integer"),
        ({"chunk_values": np.array(48.0)}, "chunk_values is not one integer"),
        ({"chunk_values": np.array([48, 48])}, "chunk_values is not one integer"),
        ({"chunk_values": np.array(96)}, r"chunk_sha256 field is not 2 × 10 digests"),
        ({"streams": np.zeros((4, 10), np.uint8)}, "streams field is not 4 generator states of 5056 bytes"),
        ({"streams": np.zeros((4, 5056), np.int64)}, "streams field is not 4 generator states"),
        ({"streams": np.zeros((4, 5056), np.uint8)}, "streams field holds a state no generator can take"),
        ({"chunk_sha256": np.array(["x"])}, r"chunk_sha256 field is not 2 × 20 digests"),
    ],
)  # fmt: skip
def test_a_broken_part_field_is_one_clear_error(tmp_path, change, says):
    path = _file(tmp_path, TaskSpec(rung="L3", r_star=2, seed=0, **SMALL), **change)
    with pytest.raises(ValueError, match=says) as exc:
        load_task(path, train=3)
    assert "\n" not in str(exc.value) and str(path) in str(exc.value)
    with pytest.raises(ValueError, match=says):
        load_task(path)  # the whole load reads them too


@pytest.mark.parametrize(
    "row, col, train, differ",
    [(0, 0, 3, "X_train"), (1, 1, 3, "Y_train"), (1, 19, 40 - 1, "Y_train")],
)
def test_a_chunk_that_differs_is_named(tmp_path, row, col, train, differ):
    spec = TaskSpec(rung="L3", r_star=2, seed=0, **SMALL)
    path = _file(tmp_path, spec, chunk_sha256=_digests(spec, row, col))
    with pytest.raises(ValueError, match=rf"differ from those the tasks stage made \({differ}\)"):
        load_task(path, train=train)


def test_a_chunk_beyond_the_part_is_not_checked(tmp_path):
    spec = TaskSpec(rung="L3", r_star=2, seed=0, **SMALL)
    path = _file(tmp_path, spec, chunk_sha256=_digests(spec, 0, 5))
    load_task(path, train=10)  # chunks 0-4
    with pytest.raises(ValueError, match=r"\(X_train\)"):
        load_task(path, train=11)


def test_streams_of_another_task_are_refused(tmp_path):
    other = task_file_arrays(TaskSpec(rung="L3", r_star=2, seed=1, **SMALL), "never", CHUNK)
    spec = TaskSpec(rung="L3", r_star=2, seed=0, **SMALL)
    path = _file(tmp_path, spec, streams=other["streams"])
    with pytest.raises(ValueError, match=r"differ .*\(X_train, Y_train, X_test, Y_test\)"):
        load_task(path, train=3)


def test_a_changed_test_digest_is_refused_by_a_part(tmp_path):
    spec = TaskSpec(rung="L4", r_star=2, seed=0, **SMALL)
    stored = task_file_arrays(spec, "never", CHUNK)["data_sha256"].copy()
    stored[DATA_KEYS.index("Y_test")] = "0" * 64
    path = task_file_without_data(tmp_path / "t.npz", spec, data_sha256=stored)
    with pytest.raises(ValueError, match=r"\(Y_test\)"):
        load_task(path, train=3)
