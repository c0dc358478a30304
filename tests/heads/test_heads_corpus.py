"""The heads corpora (docs/method.md §9): sorted files, a split by group, near-copies out of
the held-out text, byte tokens; the standard library and the manual pages."""

import gzip
from pathlib import Path

import numpy as np
import pytest

from entropic_bound.heads.corpus import (
    FILE_SEPARATOR,
    Document,
    group_order,
    load_corpus,
    man_files,
    man_group,
    random_windows,
    source_files,
    split_by_group,
    stdlib_group,
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


def test_groups_are_held_out_whole_first_fit_in_a_fixed_order(tree):
    # groups (bytes): a 1, b 2, d 2, e 5, pkg 3; their fixed order by SHA-256 of the name:
    assert group_order(["a", "b", "d", "e", "pkg"]) == ["d", "b", "e", "a", "pkg"]
    # half of 13 bytes: d (2), b (4), e would make 9 > 6.5, a (5), pkg would make 8
    c = load_corpus(tree, valid_share=0.5)
    assert bytes(c.valid) == FILE_SEPARATOR.join([b"a", b"bb", b"dd"])
    assert bytes(c.train) == FILE_SEPARATOR.join([b"eeeee", b"ccc"])
    assert (c.files_train, c.files_valid, c.groups_train, c.groups_valid) == (2, 3, 2, 3)
    assert c.train.dtype == np.uint8
    # a fifth: d alone fits
    assert bytes(load_corpus(tree, valid_share=0.2).valid) == b"dd"


def test_max_bytes_stops_after_the_file_that_reaches_it(tree):
    # a (1) + b (2) = 3 bytes; b comes first in the order but 2 > 1.5; a fits
    c = load_corpus(tree, max_bytes=3, valid_share=0.5)
    assert bytes(c.train) == b"bb" and bytes(c.valid) == b"a"


def test_a_package_is_one_group_and_never_split(tree):
    write(tree, "pkg/z.py", b"zz")
    for share in (0.1, 0.2, 0.35, 0.5):
        c = load_corpus(tree, valid_share=share)
        held = bytes(c.valid)
        assert (b"ccc" in held) == (b"zz" in held)
    assert [stdlib_group(r) for r in ("os.py", "json/decoder.py")] == ["os", "json"]
    # when no group fits, the first in the order is held out (nothing would be, else)
    docs = [Document("x.py", "x", b"x" * 10), Document("y.py", "y", b"y" * 10)]
    train, held = split_by_group(docs, 0.1)
    assert [d.group for d in held] == [group_order(["x", "y"])[0]] and len(train) == 1


def test_excluded_groups_and_the_group_cap(tree):
    write(tree, "pkg/z.py", b"zz")
    c = load_corpus(tree, valid_share=0.5, exclude_groups=["b", "d"])  # a 1, e 5, pkg 5
    assert b"bb" not in bytes(c.train) + bytes(c.valid)
    assert bytes(c.valid) == FILE_SEPARATOR.join([b"eeeee"])  # e (5 ≤ 5.5), then a would not fit
    # pkg capped at 3 bytes: c.py (3) reaches it, z.py is not read
    c = load_corpus(tree, valid_share=0.5, max_group_bytes=3)
    assert b"zz" not in bytes(c.train) + bytes(c.valid)


def test_a_held_out_near_copy_of_training_text_is_left_out(tree):
    text = b" ".join(b"w%d" % i for i in range(40))
    write(tree, "a.py", text)  # 149 bytes: the one group that does not fit, training
    write(tree, "b.py", text[:100] + b" fresh words here")  # held out: a near-copy of a.py
    c = load_corpus(tree, valid_share=0.5)  # held out: d, b (dropped), e, pkg
    assert bytes(c.valid) == FILE_SEPARATOR.join([b"dd", b"eeeee", b"ccc"])
    assert (c.files_valid, c.dropped_files, c.dropped_bytes) == (3, 1, 117)
    d = c.describe()
    assert d["valid_near_copies_dropped"] == 1 and len(d["valid_sha256"]) == 64
    # the threshold is the config's: at 0.99 the near-copy stays (containment 19/22)
    assert load_corpus(tree, valid_share=0.5, max_containment=0.99).files_valid == 4


def test_a_corpus_without_held_out_files_is_refused(tree):
    with pytest.raises(ValueError, match="none held out"):
        load_corpus(tree, max_bytes=1, valid_share=0.5)  # one group


def test_the_digest_changes_with_a_byte(tree):
    before = load_corpus(tree, valid_share=0.5).sha256
    write(tree, "d.py", b"dD")
    assert load_corpus(tree, valid_share=0.5).sha256 != before


def test_a_slice_of_the_standard_library_is_deterministic():
    a = load_corpus(max_bytes=60_000, valid_share=0.3)
    b = load_corpus(max_bytes=60_000, valid_share=0.3)
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


def gz(root: Path, rel: str, text: bytes) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(text, mtime=0))


@pytest.fixture
def man(tmp_path):
    """Pages in man1/ and man3/: gzip and plain, a family, an alias (.so), a symbolic link,
    a language subdirectory and a directory that is not a section."""
    gz(tmp_path, "man1/git.1.gz", b".TH GIT 1\ngit text")
    gz(tmp_path, "man1/git-log.1.gz", b".TH GIT-LOG 1\nlog text")
    gz(tmp_path, "man1/ls.1.gz", b".TH LS 1\nls text")
    gz(tmp_path, "man1/dir.1.gz", b".so man1/ls.1\n")  # an alias of ls
    (tmp_path / "man1" / "vdir.1.gz").symlink_to("ls.1.gz")
    write(tmp_path, "man3/Dpkg::Path.3perl", b".TH Dpkg::Path 3\nperl text")
    gz(tmp_path, "de/man1/ls.1.gz", b"deutsch")
    write(tmp_path, "cache/x.1", b"not a section")
    return tmp_path


def test_the_manual_pages_are_read_from_their_sections_only(man):
    names = [p.relative_to(man).as_posix() for p in man_files(man)]
    assert names == [
        "man1/dir.1.gz",
        "man1/git-log.1.gz",
        "man1/git.1.gz",
        "man1/ls.1.gz",
        "man3/Dpkg::Path.3perl",
    ]
    assert [man_group(n) for n in names] == ["dir", "git", "git", "ls", "Dpkg"]


def test_a_man_corpus_decompresses_and_splits_by_family(man):
    # families (bytes) git 40, ls 16, Dpkg 26 (the alias left out), in the order git, ls, Dpkg:
    # half of 82 holds git, both its pages
    c = load_corpus(man, valid_share=0.5, source="man")
    assert bytes(c.valid) == FILE_SEPARATOR.join(
        [b".TH GIT-LOG 1\nlog text", b".TH GIT 1\ngit text"]
    )
    assert bytes(c.train) == FILE_SEPARATOR.join(
        [b".TH LS 1\nls text", b".TH Dpkg::Path 3\nperl text"]
    )
    assert c.describe()["corpus"] == "man-pages" and c.source == "man"


def test_a_missing_root_or_source_is_one_line(tmp_path):
    with pytest.raises(ValueError, match="is not a directory"):
        load_corpus(tmp_path / "nowhere", source="man")
    with pytest.raises(ValueError, match="source must be one of"):
        load_corpus(tmp_path, source="perl")
