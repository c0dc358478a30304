"""The heads corpora (docs/method.md §9, "Corpus"): real text no one here wrote, installed on
the machine, never downloaded at run time. Tokens are bytes (vocabulary 256).

* ``stdlib``: the ``.py`` sources of the running interpreter's standard library (© Python
  Software Foundation, PSF License Agreement), under ``sysconfig.get_paths()["stdlib"]``, the
  directories :data:`EXCLUDED_DIRS` left out. A file's *group* is its top-level package (its
  first path component), or its own module name for a top-level file.
* ``man``: the manual pages the system installs, the troff sources under ``<root>/man*/``
  (default root ``/usr/share/man``; the language subdirectories such as ``de/`` are not read),
  ``.gz`` files decompressed, symbolic links and ``.so`` redirections (aliases of another page)
  left out. A page's group is its family: its file name up to the first ``.``, ``-``, ``_`` or
  ``:`` (``git-config.1.gz`` → ``git``, ``Dpkg::Path.3perl.gz`` → ``Dpkg``).

Files are read in sorted order of their relative path; a file that is not UTF-8 text is left
out, and so is every group named in ``exclude_groups`` (the stdlib configs leave out
``pydoc_data``, a generated dump of the documentation's prose: 757 kB in one file); with
``max_group_bytes`` a group stops after the file that reaches it (so that one
generated family, the 61 MB of ``gcloud`` pages among 93 MB, does not become the corpus); with
``max_bytes`` reading stops after the file that reaches it. The split is by group: in a fixed
pseudo-random order of the groups (the SHA-256 of their names), each group that still fits under
``valid_share`` of the bytes is held out whole, so that a family of near-copies
(``encodings/cp*.py``) is never on both sides, and the held-out share is what was asked whichever
groups happen to be large (every 10th family by name put ``git``, ``gcloud`` and ``cmake``
together, 28 % of the manual pages, on the held-out side; holding groups out until the share is
reached put ``idlelib``, 63 % of the held-out stdlib, there). Then a held-out file whose shingled containment
in the training text reaches ``max_containment`` is left out (:mod:`.dedup`). What the stage
records: the source, the counts, a SHA-256 of every file read and one of each side's bytes.
"""

from __future__ import annotations

import gzip
import hashlib
import re
import sysconfig
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from entropic_bound.heads.dedup import (
    MAX_CONTAINMENT,
    SHINGLE_WORDS,
    containment,
    training_shingles,
)

#: directories left out of the stdlib: tests (some are deliberately malformed or non-UTF-8
#: text), third-party packages and caches
EXCLUDED_DIRS = frozenset({"test", "tests", "site-packages", "dist-packages", "__pycache__"})
#: byte between two files: a blank line, as files are joined in a source tree listing
FILE_SEPARATOR = b"\n\n"
#: the vocabulary of byte tokens
VOCAB = 256
#: the corpus sources, their default root and their licence in the records
SOURCES = ("stdlib", "man")
MAN_ROOT = "/usr/share/man"
LICENSES = {"stdlib": "PSF-2.0", "man": "each page's own (installed by the system's packages)"}
_MAN_SECTION = re.compile(r"man[0-9a-z]+")
_FAMILY = re.compile(r"[.\-_:]")


@dataclass(frozen=True)
class Document:
    """One file of a corpus: its relative path, its group and its text (bytes)."""

    rel: str
    group: str
    data: bytes


@dataclass(frozen=True)
class Corpus:
    """The split corpus: ``train``/``valid`` uint8 arrays [T] of byte tokens, and what it is."""

    train: np.ndarray
    valid: np.ndarray
    root: str
    files_train: int
    files_valid: int
    sha256: str
    source: str = "stdlib"
    groups_train: int = 0
    groups_valid: int = 0
    dropped_files: int = 0
    dropped_bytes: int = 0
    train_sha256: str = ""
    valid_sha256: str = ""

    def describe(self) -> dict:
        return {
            "corpus": "python-stdlib" if self.source == "stdlib" else "man-pages",
            "source": self.source,
            "license": LICENSES[self.source],
            "root": self.root,
            "files_train": self.files_train,
            "files_valid": self.files_valid,
            "groups_train": self.groups_train,
            "groups_valid": self.groups_valid,
            "bytes_train": int(self.train.size),
            "bytes_valid": int(self.valid.size),
            "valid_near_copies_dropped": self.dropped_files,
            "valid_bytes_dropped": self.dropped_bytes,
            "sha256": self.sha256,
            "train_sha256": self.train_sha256,
            "valid_sha256": self.valid_sha256,
        }


def stdlib_root() -> Path:
    """The standard library's directory of the running interpreter."""
    return Path(sysconfig.get_paths()["stdlib"])


def source_files(root: Path) -> list[Path]:
    """Every ``.py`` file under ``root`` outside :data:`EXCLUDED_DIRS`, sorted by relative path."""
    files = [
        p
        for p in root.rglob("*.py")
        if p.is_file() and not EXCLUDED_DIRS.intersection(p.relative_to(root).parts[:-1])
    ]
    return sorted(files, key=lambda p: p.relative_to(root).as_posix())


def man_files(root: Path) -> list[Path]:
    """Every regular file (not a symbolic link) of ``root``/man*/, sorted by relative path."""
    files = [
        p
        for section in root.iterdir()
        if section.is_dir() and _MAN_SECTION.fullmatch(section.name)
        for p in section.iterdir()
        if p.is_file() and not p.is_symlink()
    ]
    return sorted(files, key=lambda p: p.relative_to(root).as_posix())


def stdlib_group(rel: str) -> str:
    """A stdlib file's group: its top-level package, or its module name (``os.py`` → ``os``)."""
    parts = rel.split("/")
    return parts[0] if len(parts) > 1 else parts[0].removesuffix(".py")


def man_group(rel: str) -> str:
    """A manual page's family: its file name up to the first ``.``, ``-``, ``_`` or ``:``."""
    return _FAMILY.split(rel.rsplit("/", 1)[-1], maxsplit=1)[0]


def _utf8(data: bytes) -> bytes | None:
    """``data`` when it is UTF-8 text, else None (left out)."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return data


def _man_text(path: Path) -> bytes | None:
    """A page's troff source (decompressed), or None for an unreadable archive or a ``.so``
    redirection (one line naming another page: an alias, not text)."""
    try:
        data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    except (OSError, EOFError):
        return None
    if data.startswith(b".so ") and data.count(b"\n") <= 1:
        return None
    return _utf8(data)


def documents(source: str, root: Path) -> Iterator[Document]:
    """The documents of ``source`` under ``root``, in sorted path order (non-UTF-8 and empty
    files, aliases and unreadable archives left out)."""
    if source == "stdlib":
        for path in source_files(root):
            data = _utf8(path.read_bytes())
            if data:
                rel = path.relative_to(root).as_posix()
                yield Document(rel, stdlib_group(rel), data)
    elif source == "man":
        for path in man_files(root):
            data = _man_text(path)
            if data:
                rel = path.relative_to(root).as_posix()
                yield Document(rel, man_group(rel), data)
    else:
        raise ValueError(f"corpus source must be one of {', '.join(SOURCES)}, got {source!r}")


def default_root(source: str) -> Path:
    return stdlib_root() if source == "stdlib" else Path(MAN_ROOT)


def read_documents(
    source: str, root: Path, max_bytes: int = 0, max_group_bytes: int = 0, exclude_groups=()
):
    """(documents, sha256 of every file read): sorted order, the groups ``exclude_groups`` left
    out, each group stopped after the file that reaches ``max_group_bytes`` (0: no cap), all
    stopped after ``max_bytes`` (0: no cap)."""
    digest = hashlib.sha256()
    kept, per_group, total = [], {}, 0
    excluded = frozenset(exclude_groups)
    for doc in documents(source, root):
        if doc.group in excluded:
            continue
        if max_group_bytes and per_group.get(doc.group, 0) >= max_group_bytes:
            continue
        per_group[doc.group] = per_group.get(doc.group, 0) + len(doc.data)
        kept.append(doc)
        digest.update(doc.rel.encode() + b"\0" + doc.data)
        total += len(doc.data)
        if max_bytes and total >= max_bytes:
            break
    return kept, digest.hexdigest()


def group_order(names) -> list[str]:
    """The groups in a fixed pseudo-random order: by the SHA-256 of their names (the same on
    every machine; independent of their sizes, their text and the sorted order of their names,
    in which neighbours are often alike: ``cp1250``, ``cp1251``)."""
    return sorted(names, key=lambda g: hashlib.sha256(g.encode()).hexdigest())


def split_by_group(docs: list[Document], valid_share: float) -> tuple[list, list]:
    """(train, held-out) documents: in :func:`group_order`, each group that still fits under
    ``valid_share`` of the bytes is held out, whole (first fit: a large group that would
    overshoot stays in training); when none fits, the first group is held out."""
    sizes: dict[str, int] = {}
    for d in docs:
        sizes[d.group] = sizes.get(d.group, 0) + len(d.data)
    order = group_order(sizes)
    target, held, total = valid_share * sum(sizes.values()), set(), 0
    for g in order:
        if total + sizes[g] <= target:
            held.add(g)
            total += sizes[g]
    if not held and len(order) > 1:
        held.add(order[0])
    return [d for d in docs if d.group not in held], [d for d in docs if d.group in held]


def load_corpus(
    root=None,
    max_bytes: int = 0,
    valid_share: float = 0.1,
    *,
    source: str = "stdlib",
    max_group_bytes: int = 0,
    exclude_groups=(),
    shingle_words: int = SHINGLE_WORDS,
    max_containment: float = MAX_CONTAINMENT,
) -> Corpus:
    """The corpus of ``source`` under ``root`` (default: :func:`default_root`), split by group
    and with the held-out near-copies of training text left out (module docstring)."""
    if not 0 < valid_share < 1:
        raise ValueError(f"valid_share must lie in (0, 1), got {valid_share}")
    root = default_root(source) if root is None else Path(root)
    if not root.is_dir():
        raise ValueError(f"corpus root {root} is not a directory (source {source})")
    docs, sha = read_documents(source, root, max_bytes, max_group_bytes, exclude_groups)
    train, held = split_by_group(docs, valid_share)
    if not held or not train:
        raise ValueError(
            f"corpus under {root}: {len(docs)} files in {len({d.group for d in docs})} groups, "
            f"{'none held out' if not held else 'none left to train on'}; raise max_bytes or "
            "lower valid_share"
        )
    seen = training_shingles([d.data for d in train], shingle_words)
    valid = [d for d in held if containment(d.data, seen, shingle_words) < max_containment]
    if not valid:
        raise ValueError(
            f"corpus under {root}: every held-out file is a near-copy of training text; "
            "raise corpus.max_containment"
        )
    join = {
        side: np.frombuffer(FILE_SEPARATOR.join(d.data for d in ds), dtype=np.uint8)
        for side, ds in (("train", train), ("valid", valid))
    }
    return Corpus(
        train=join["train"],
        valid=join["valid"],
        root=str(root),
        files_train=len(train),
        files_valid=len(valid),
        sha256=sha,
        source=source,
        groups_train=len({d.group for d in train}),
        groups_valid=len({d.group for d in valid}),
        dropped_files=len(held) - len(valid),
        dropped_bytes=sum(len(d.data) for d in held) - sum(len(d.data) for d in valid),
        train_sha256=hashlib.sha256(join["train"].tobytes()).hexdigest(),
        valid_sha256=hashlib.sha256(join["valid"].tobytes()).hexdigest(),
    )


def windows(tokens: np.ndarray, count: int, length: int) -> np.ndarray:
    """``count`` windows of ``length`` + 1 tokens evenly spaced over ``tokens``: [count, length+1]
    int64 (inputs ``[:, :-1]``, next-token targets ``[:, 1:]``); the held-out sets, fixed."""
    span = tokens.size - (length + 1)
    if span < 0:
        raise ValueError(f"{tokens.size} tokens cannot hold a window of {length + 1}")
    starts = np.linspace(0, span, count).round().astype(np.int64)
    return np.stack([tokens[s : s + length + 1] for s in starts]).astype(np.int64)


def random_windows(tokens: np.ndarray, count: int, length: int, rng) -> np.ndarray:
    """``count`` windows at uniform random starts (training minibatches): [count, length+1]."""
    starts = rng.integers(0, tokens.size - length, size=count)
    return np.stack([tokens[s : s + length + 1] for s in starts]).astype(np.int64)
