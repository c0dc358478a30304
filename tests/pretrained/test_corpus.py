"""The corpus: its files pinned by SHA-256 (a missing or changed file is one line), the rule
that joins text files, and the evenly spaced choice of windows."""

import hashlib
from pathlib import Path

import pytest

from entropic_bound.pretrained import PretrainedError
from entropic_bound.pretrained.corpus import CORPORA, corpus_files, join_texts, read_texts
from entropic_bound.pretrained.tokens import spread


def test_paragraphs_are_reflowed_and_joined_by_one_blank_line():
    a = "  Title\n\n   first line\n  of a paragraph.\n \t\n\fSecond   one.\r\n"
    b = "\n\nLast\tfile.\n"
    assert join_texts([a, b]) == "Title\n\nfirst line of a paragraph.\n\nSecond one.\n\nLast file."
    assert join_texts(["", " \n \n"]) == ""


def test_read_texts_records_each_file(tmp_path):
    (tmp_path / "a.txt").write_text("one\ntwo")
    (tmp_path / "b.txt").write_bytes("naïve".encode())
    text, records = read_texts([tmp_path / "a.txt", tmp_path / "b.txt"])
    assert text == "one two\n\nnaïve"
    assert records[1] == {
        "path": str(tmp_path / "b.txt"),
        "bytes": 6,
        "sha256": hashlib.sha256("naïve".encode()).hexdigest(),
    }


def pinned_copy(tmp_path) -> Path:
    """The corpus's file names under a folder of ours, each holding its own name."""
    for name in CORPORA["common-licenses"][1]:
        (tmp_path / name).write_text(name)
    return tmp_path


def test_a_missing_or_changed_corpus_file_is_one_line(tmp_path):
    root = pinned_copy(tmp_path)
    with pytest.raises(PretrainedError, match=r"corpus common-licenses: .*Apache-2.0 has SHA-256"):
        corpus_files("common-licenses", root)
    (root / "Apache-2.0").unlink()
    with pytest.raises(PretrainedError, match=r"Apache-2.0 is missing; install the package") as e:
        corpus_files("common-licenses", root)
    assert "\n" not in str(e.value)
    with pytest.raises(PretrainedError, match="no corpus named 'wiki'; known: common-licenses"):
        corpus_files("wiki")


def test_the_systems_licence_texts_are_the_pinned_ones():
    root, files = CORPORA["common-licenses"]
    if not all((Path(root) / name).is_file() for name in files):
        pytest.skip(f"{root} does not hold the corpus (not a Debian system)")
    found = corpus_files("common-licenses")
    assert [p.name for p, _ in found] == sorted(files) == list(files)
    text, records = read_texts([p for p, _ in found])
    assert [r["sha256"] for r in records] == list(files.values())
    assert 150_000 < len(text) < 170_000


@pytest.mark.parametrize(
    "total, count, want",
    [(10, None, list(range(10))), (10, 10, list(range(10))), (10, 4, [0, 2, 5, 7]), (7, 1, [0])],
)
def test_windows_are_spread_evenly_by_a_rule(total, count, want):
    assert spread(total, count) == want


def test_more_windows_than_the_text_holds_is_one_line():
    with pytest.raises(PretrainedError, match="the text gives 3 windows, fewer than the 4 asked"):
        spread(3, 4)
