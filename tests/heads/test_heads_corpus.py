"""The heads corpus (docs/method.md §9): sorted files, a fixed whole-file split, byte tokens."""

from pathlib import Path

import numpy as np
import pytest

from entropic_bound.heads.corpus import (
    FILE_SEPARATOR,
    load_corpus,
    random_windows,
    source_files,
    stdlib_root,
    windows,
)


def write(root: Path, rel: str, data: bytes) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


@pytest.fixture
def tree(tmp_path):
    """Five source files in a known order, a test directory, a cache, a latin-1 file, a text."""
    for name, text in [("b.py", b"bb"), ("a.py", b"a"), ("pkg/c.py", b"ccc"), ("d.py", b"dd")]:
        write(tmp_path, name, text)
    write(tmp_path, "e.py", b"eeeee")
    write(tmp_path, "test/t.py", b"skip")
    write(tmp_path, "pkg/tests/t.py", b"skip")
    write(tmp_path, "__pycache__/x.py", b"skip")
    write(tmp_path, "bad.py", "caf\xe9".encode("latin-1"))  # not UTF-8: left out
    write(tmp_path, "notes.txt", b"not python")
    return tmp_path


def test_files_are_sorted_by_path_and_tests_are_left_out(tree):
    names = [p.relative_to(tree).as_posix() for p in source_files(tree)]
    assert names == ["a.py", "b.py", "bad.py", "d.py", "e.py", "pkg/c.py"]


def test_every_kth_kept_file_is_held_out_whole(tree):
    # kept (UTF-8) in order: a, b, d, e, pkg/c; every 2nd -> b, e to validation
    c = load_corpus(tree, valid_every=2)
    assert bytes(c.train) == FILE_SEPARATOR.join([b"a", b"dd", b"ccc"])
    assert bytes(c.valid) == FILE_SEPARATOR.join([b"bb", b"eeeee"])
    assert (c.files_train, c.files_valid) == (3, 2)
    assert c.train.dtype == np.uint8


def test_max_bytes_stops_after_the_file_that_reaches_it(tree):
    c = load_corpus(tree, max_bytes=3, valid_every=2)  # a (1) + b (2) = 3 bytes
    assert bytes(c.train) == b"a" and bytes(c.valid) == b"bb"


def test_a_corpus_without_held_out_files_is_refused(tree):
    with pytest.raises(ValueError, match="none held out"):
        load_corpus(tree, max_bytes=1, valid_every=2)


def test_the_digest_changes_with_a_byte(tree):
    before = load_corpus(tree, valid_every=2).sha256
    write(tree, "d.py", b"dD")
    assert load_corpus(tree, valid_every=2).sha256 != before


def test_a_slice_of_the_standard_library_is_deterministic():
    a = load_corpus(max_bytes=60_000, valid_every=3)
    b = load_corpus(max_bytes=60_000, valid_every=3)
    assert a.sha256 == b.sha256 and np.array_equal(a.train, b.train)
    assert a.files_valid >= 1 and a.train.size + a.valid.size >= 60_000
    assert a.root == str(stdlib_root())
    assert b"import" in bytes(a.train) or b"def " in bytes(a.train)  # Python source text


def test_windows_are_evenly_spaced_and_next_token_shifted():
    tokens = np.arange(20, dtype=np.uint8)
    w = windows(tokens, count=3, length=4)  # starts 0, 7.5 -> 8, 15
    assert w.tolist() == [[0, 1, 2, 3, 4], [8, 9, 10, 11, 12], [15, 16, 17, 18, 19]]
    with pytest.raises(ValueError, match="cannot hold"):
        windows(tokens, count=1, length=20)


def test_random_windows_stay_inside_and_follow_the_seed():
    tokens = np.arange(50, dtype=np.uint8)
    a = random_windows(tokens, 100, 9, np.random.default_rng(0))
    b = random_windows(tokens, 100, 9, np.random.default_rng(0))
    assert np.array_equal(a, b) and a.shape == (100, 10)
    assert (np.diff(a, axis=1) == 1).all() and a.min() >= 0 and a.max() <= 49
