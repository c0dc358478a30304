"""Task data made in chunks and made again from seeds: bitwise the one-draw generation
(tests/tasks_reference.py, the code that made the paper's tables), shared where the stream is
shared, and a file without data loads what a file with data does, or fails in one clear line."""

import json
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml
from fabricate import task_file_without_data
from hypothesis import given, settings
from hypothesis import strategies as st
from tasks_reference import make_task_reference

from entropic_bound.config.load import ConfigError, validate
from entropic_bound.core.io import write_npz
from entropic_bound.tasks import data as task_data
from entropic_bound.tasks.data import chunk_bounds
from entropic_bound.tasks.files import (
    AUTO_STORE_MAX_MB,
    DATA_KEYS,
    PART_KEYS,
    data_mb,
    load_task,
    stores_data,
    task_file_arrays,
)
from entropic_bound.tasks.grid import task_specs
from entropic_bound.tasks.make import TaskSpec, make_task
from entropic_bound.tasks.stage import write_tasks

REPO = Path(__file__).resolve().parents[2]
RUNGS = ["L0", "L1", "L2", "L3", "L4", "Lam0.50"]
SMALL = dict(n=6, d=4, n_train=40, n_test=24)


@st.composite
def small_specs(draw):
    """A task of any rung at a small shape (n, d ≥ 1, B from 1), σ zero or not, either value map."""
    n, d = draw(st.integers(1, 7)), draw(st.integers(1, 7))
    rung = draw(st.sampled_from(RUNGS))
    k = n if rung in ("L0", "L1") else d
    return TaskSpec(
        rung=rung,
        r_star=draw(st.integers(1, k)),
        seed=draw(st.integers(0, 3)),
        n=n,
        d=d,
        n_train=draw(st.integers(1, 40)),
        n_test=draw(st.integers(1, 24)),
        sigma=draw(st.sampled_from([0.0, 0.1])),
        beta=draw(st.sampled_from([0.5, 1.0])),
        value_map=draw(st.sampled_from(["known", "unknown"])),
        base_seed=draw(st.integers(0, 2)),
    )


def _assert_same(a: dict, b: dict):
    assert list(a) == list(b)
    for k in a:
        assert a[k].dtype == b[k].dtype and np.array_equal(a[k], b[k]), k


# --- chunks ---


def test_chunk_bounds_by_hand():
    # 3 values a sequence: 16 sequences make the first multiple of 16 values
    assert chunk_bounds(10, 3, 32) == [(0, 10)]
    assert chunk_bounds(40, 3, 32) == [(0, 16), (16, 32), (32, 40)]
    # 4 values a sequence, 16 a chunk: 4 sequences each; the tail of 2 (8 values) joins its neighbour
    assert chunk_bounds(12, 4, 16) == [(0, 4), (4, 8), (8, 12)]
    assert chunk_bounds(10, 4, 16) == [(0, 4), (4, 10)]
    # a tail under 16 values joins the chunk before it (the sampler's scalar path draws otherwise)
    assert chunk_bounds(17, 1, 16) == [(0, 17)]
    assert chunk_bounds(33, 1, 16) == [(0, 16), (16, 33)]
    assert chunk_bounds(33, 16, 64) == [(0, 4), (4, 8), (8, 12), (12, 16), (16, 20), (20, 24),
                                        (24, 28), (28, 32), (32, 33)]  # fmt: skip


@given(st.integers(1, 300), st.integers(1, 40), st.integers(1, 200))
def test_chunk_bounds_cover_in_blocks_of_16(size, per_seq, chunk_values):
    bounds = chunk_bounds(size, per_seq, chunk_values)
    assert bounds[0][0] == 0 and bounds[-1][1] == size
    assert all(a[1] == b[0] for a, b in zip(bounds, bounds[1:]))
    assert all((hi - lo) * per_seq % 16 == 0 for lo, hi in bounds[:-1])
    assert len(bounds) == 1 or (bounds[-1][1] - bounds[-1][0]) * per_seq >= 16


# --- bitwise the one-draw generation ---


@settings(max_examples=60)
@given(small_specs(), st.sampled_from([16, 48, 100, 1 << 21]))
def test_chunked_generation_is_the_one_draw_generation(spec, chunk_values):
    _assert_same(make_task(spec, chunk_values=chunk_values), make_task_reference(spec))


@pytest.mark.parametrize("rung", RUNGS)
def test_paper_shape_is_the_one_draw_generation(rung):
    # the paper's tasks (n = d = 16, 4096 + 2048 sequences) in many chunks: the files of the run
    # whose tables are checked sha256-equal
    spec = TaskSpec(rung=rung, r_star=4, seed=1)
    _assert_same(make_task(spec, chunk_values=1 << 16), make_task_reference(spec))


@settings(max_examples=30)
@given(small_specs())
def test_a_file_without_data_loads_the_arrays_of_one_with(tmp_path_factory, spec):
    folder = tmp_path_factory.mktemp("tasks")
    write_npz(folder / "with.npz", **task_file_arrays(spec, "always"))
    write_npz(folder / "without.npz", **task_file_arrays(spec, "never"))
    (a, meta_a), (b, meta_b) = load_task(folder / "with.npz"), load_task(folder / "without.npz")
    assert meta_a == meta_b
    _assert_same(a, b)


def test_a_file_without_data_holds_the_teacher_and_seeds(tmp_path):
    spec = TaskSpec(rung="L4", r_star=2, seed=1, **SMALL)
    arrays = task_file_arrays(spec, "never")
    assert sorted(arrays) == sorted(
        ["kernel", "V", "P", "spectrum", "meta", "seeds", "data_sha256", *PART_KEYS]
    )
    assert arrays["seeds"].tolist() == [0, 2, 1]  # (base seed, r*, seed)
    full = make_task(spec)
    assert all(np.array_equal(arrays[k], full[k]) for k in ("kernel", "V", "P", "spectrum", "meta"))
    write_npz(tmp_path / "t.npz", **arrays)
    # the teacher, the seeds and four stream positions of 5 KB (tasks/parts.py): the data would
    # be 24 KB here, 576 MB at d = 64
    assert (tmp_path / "t.npz").stat().st_size < 32768


# --- shared inputs ---


def test_rungs_with_one_kernel_size_share_inputs():
    sq = {r: make_task(TaskSpec(rung=r, r_star=2, seed=0, n=4, d=4, n_train=16, n_test=8,
                                sigma=0.1)) for r in RUNGS}  # fmt: skip
    for r in RUNGS[1:]:
        for k in ("X_train", "X_test", "P", "V"):
            np.testing.assert_array_equal(sq[r][k], sq["L0"][k])
    # n ≠ d: the static rungs draw an n × n kernel, so their stream (and X) is not the others'
    wide = {r: make_task(TaskSpec(rung=r, r_star=2, seed=0, **SMALL)) for r in RUNGS}
    np.testing.assert_array_equal(wide["L0"]["X_train"], wide["L1"]["X_train"])
    np.testing.assert_array_equal(wide["L2"]["X_train"], wide["L4"]["X_train"])
    assert not np.array_equal(wide["L0"]["X_train"], wide["L4"]["X_train"])


# σ > 0: X_train and X_test are drawn once more to find where E starts; σ = 0 draws no E, and
# passes over E_train once to find where X_test starts (E_test: never)
@pytest.mark.parametrize("sigma, passes", [(0.1, [32, 16]), (0.0, [32])])
def test_rungs_that_share_inputs_find_the_stream_positions_once(
    tmp_path, monkeypatch, sigma, passes
):
    specs = [
        TaskSpec(rung=r, r_star=2, seed=5, n=4, d=4, n_train=32, n_test=16, sigma=sigma)
        for r in RUNGS
    ]
    for s in specs:
        write_npz(tmp_path / f"{s.task_id}.npz", **task_file_arrays(s, "never"))
    monkeypatch.setattr(task_data, "_POSITIONS", {})
    skips = []
    real = task_data._skipped
    monkeypatch.setattr(task_data, "_skipped", lambda *a: skips.append(a[1]) or real(*a))
    loaded = [load_task(tmp_path / f"{s.task_id}.npz")[0] for s in specs]
    assert skips == []  # the files record where each split's E starts (tasks/parts.py)
    for s in specs:  # files without those records
        arrays = dict(np.load(tmp_path / f"{s.task_id}.npz"))
        write_npz(
            tmp_path / f"{s.task_id}.npz", **{k: arrays[k] for k in arrays if k not in PART_KEYS}
        )
    again = [load_task(tmp_path / f"{s.task_id}.npz")[0] for s in specs]
    assert skips == passes  # for the first rung only
    for a, b in zip(again, loaded):
        _assert_same(a, b)
        np.testing.assert_array_equal(a["X_train"], loaded[0]["X_train"])


# --- the storage rule ---


def test_store_rule():
    paper = TaskSpec(rung="L4", r_star=1, seed=0)  # n = d = 16, 4096 + 2048 sequences
    large = TaskSpec(rung="L4", r_star=1, seed=0, n=64, d=64, n_train=4096, n_test=2048)
    assert data_mb(paper) == 12.0 and data_mb(large) == 192.0  # 2 · 6144 · nd · 4 bytes, in MiB
    assert stores_data(paper, "auto") and not stores_data(large, "auto")
    assert stores_data(large, "always") and not stores_data(paper, "never")
    edge = TaskSpec(rung="L4", r_star=1, seed=0, n=16, d=16, n_train=8192 * 2, n_test=16384)
    assert data_mb(edge) == AUTO_STORE_MAX_MB and stores_data(edge, "auto")  # ≤, inclusive
    with pytest.raises(ValueError, match="task.store_data is 'sometimes'; use one of auto"):
        stores_data(paper, "sometimes")


def test_the_schema_refuses_an_unknown_store_mode():
    cfg = yaml.safe_load((REPO / "config" / "quick.yaml").read_text())
    cfg["task"]["store_data"] = "sometimes"
    with pytest.raises(ConfigError, match="task.store_data"):
        validate(cfg)


def test_write_tasks_follows_store_data(tmp_path):
    cfg = yaml.safe_load((REPO / "config" / "quick.yaml").read_text())
    for mode, holds in (("always", True), ("never", False), ("auto", True)):
        cfg["task"]["store_data"] = mode
        paths = write_tasks(cfg, "L3", tmp_path / mode)
        with np.load(paths[0]) as z:
            assert ("X_train" in z.files) is holds and ("seeds" in z.files) is not holds
    a, b = load_task(tmp_path / "always" / paths[0].name), load_task(paths[0])
    _assert_same(a[0], b[0])


def test_write_tasks_of_every_rung_writes_the_rungs_files_bitwise(tmp_path):
    """The workflow's one tasks job (rung None) writes every task of the config, each file
    byte-identical to the one the rung's own call writes."""
    cfg = yaml.safe_load((REPO / "config" / "quick.yaml").read_text())
    cfg["task"]["store_data"] = "never"  # small files: the seeds and the teacher
    every = write_tasks(cfg, None, tmp_path / "all")
    assert [p.stem for p in every] == [s.task_id for s in task_specs(cfg)]
    one = write_tasks(cfg, "L3", tmp_path / "L3")
    for p in one:
        assert p.read_bytes() == (tmp_path / "all" / p.name).read_bytes()


# --- errors: each one line naming what is wrong ---


def _file_without_data(tmp_path, **change):
    spec = TaskSpec(rung="L3", r_star=2, seed=0, **SMALL)
    return task_file_without_data(tmp_path / "t.npz", spec, **change)


@pytest.mark.parametrize(
    "change, says",
    [
        ({"seeds": None}, "holds neither its data .* nor the seeds to make them .seeds missing"),
        ({"data_sha256": None}, "nor the seeds to make them .data_sha256 missing"),
        ({"seeds": np.array([0, 3, 0])}, r"seeds field \[0, 3, 0\] is not the stream of its meta"),
        ({"seeds": np.array([0, 2])}, r"seeds field \[0, 2\] is not the stream"),
        ({"seeds": np.array([0.0, 2.0, 0.0])}, r"seeds field \[0.0, 2.0, 0.0\] is not the stream"),
        ({"seeds": np.array(["0", "2", "0"])}, "is not the stream of its meta"),
        ({"data_sha256": np.array(["x"])}, "data_sha256 field is not 4 digests"),
        ({"data_sha256": np.array(["0" * 64] * 4)}, "differ from those the tasks stage made .X_train, Y_train, X_test, Y_test"),
        ({"kernel": None}, "lacks kernel"),
    ],
)  # fmt: skip
def test_a_broken_seed_field_is_one_clear_error(tmp_path, change, says):
    path = _file_without_data(tmp_path, **change)
    with pytest.raises(ValueError, match=says) as exc:
        load_task(path)
    assert "\n" not in str(exc.value) and str(path) in str(exc.value)


def test_a_meta_that_does_not_make_the_teacher_is_refused(tmp_path):
    # seeds and meta agree, but on another stream than the one that drew the stored teacher
    meta = json.loads(str(task_file_arrays(TaskSpec(rung="L3", r_star=2, seed=0, **SMALL))["meta"]))
    meta["seed"] = 1
    path = _file_without_data(tmp_path, seeds=np.array([0, 2, 1]), meta=np.array(json.dumps(meta)))
    with pytest.raises(ValueError, match=r"do not make its teacher \(kernel differs\)"):
        load_task(path)


def test_a_meta_without_a_spec_field_is_refused(tmp_path):
    meta = json.loads(str(task_file_arrays(TaskSpec(rung="L3", r_star=2, seed=0, **SMALL))["meta"]))
    del meta["kappa"]
    path = _file_without_data(tmp_path, meta=np.array(json.dumps(meta)))
    with pytest.raises(ValueError, match="its meta lacks kappa"):
        load_task(path)


def test_a_changed_clean_power_is_refused(tmp_path):
    meta = json.loads(str(task_file_arrays(TaskSpec(rung="L3", r_star=2, seed=0, **SMALL))["meta"]))
    meta["test_clean_power"] *= 1 + 1e-15
    path = _file_without_data(tmp_path, meta=np.array(json.dumps(meta)))
    with pytest.raises(
        ValueError, match=r"differ from those the tasks stage made \(test_clean_power\)"
    ):
        load_task(path)


def test_a_stored_file_missing_data_still_lists_what_it_lacks(tmp_path):
    arrays = make_task(TaskSpec(rung="L3", r_star=2, seed=0, **SMALL))
    del arrays["Y_test"]
    write_npz(tmp_path / "t.npz", **arrays)
    with pytest.raises(ValueError, match="lacks Y_test$"):
        load_task(tmp_path / "t.npz")
    assert set(DATA_KEYS) <= set(make_task(TaskSpec(rung="L0", r_star=1, seed=0, **SMALL)))


@pytest.mark.parametrize("rung", RUNGS)
def test_a_task_is_made_on_one_thread_whatever_the_callers_count(rung):
    # at 2 threads torch's batched products round differently for L0, L3, L4 and Lλ at this shape
    # (measured on this project's CPU): the data are made on one thread, as the tasks stage did
    spec = TaskSpec(rung=rung, r_star=8, seed=0, n=64, d=64, n_train=256, n_test=64)
    one = make_task(spec)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        two = make_task(spec)
        assert torch.get_num_threads() == 2  # the caller's count is given back
    finally:
        torch.set_num_threads(before)
    _assert_same(one, two)


# --- the drawn inputs kept for the next rung of a stream ---


@pytest.mark.parametrize("limit", [0, task_data.DRAWN_MAX_VALUES])
def test_the_next_rung_of_a_stream_reads_the_kept_draws_bitwise(monkeypatch, limit):
    """L3 made right after L2 of the same (r*, seed) reuses L2's drawn X and E (when they fit
    ``DRAWN_MAX_VALUES``): the same bytes as L3 made in a fresh process, and as the one-draw
    reference; with the limit at 0 nothing is kept."""
    monkeypatch.setattr(task_data, "DRAWN_MAX_VALUES", limit)
    monkeypatch.setattr(task_data, "_DRAWN", {})
    monkeypatch.setattr(task_data, "_POSITIONS", {})
    alone = make_task(TaskSpec(rung="L3", r_star=2, seed=1, sigma=0.1, **SMALL))
    task_data._DRAWN.clear()
    task_data._POSITIONS.clear()
    make_task(TaskSpec(rung="L2", r_star=2, seed=1, sigma=0.1, **SMALL))
    assert len(task_data._DRAWN) == (1 if limit else 0)
    after = make_task(TaskSpec(rung="L3", r_star=2, seed=1, sigma=0.1, **SMALL))
    _assert_same(after, alone)
    _assert_same(
        after, make_task_reference(TaskSpec(rung="L3", r_star=2, seed=1, sigma=0.1, **SMALL))
    )
    # another stream replaces the kept draws: one stream at a time
    make_task(TaskSpec(rung="L3", r_star=1, seed=1, **SMALL))
    assert len(task_data._DRAWN) == (1 if limit else 0)


def test_tasks_at_sigma_0_and_above_record_the_same_stream_positions():
    """A task at σ = 0 draws no E, yet records where each split's X and E start as a noisy task
    of the same stream does, and draws the same X, in either order of the two in one process."""
    quiet = TaskSpec(rung="L3", r_star=2, seed=3, sigma=0.0, **SMALL)
    noisy = TaskSpec(rung="L3", r_star=2, seed=3, sigma=0.1, **SMALL)
    for first, second in ((quiet, noisy), (noisy, quiet)):
        task_data._POSITIONS.clear()
        task_data._DRAWN.clear()
        streams = [task_file_arrays(s, "never")["streams"] for s in (first, second)]
        np.testing.assert_array_equal(*streams)
        a = task_file_arrays(first, "always")
        b = task_file_arrays(second, "always")
        np.testing.assert_array_equal(a["X_train"], b["X_train"])
        np.testing.assert_array_equal(a["X_test"], b["X_test"])
        assert not np.array_equal(a["Y_train"], b["Y_train"])  # the noise is there
