"""The heads corpus (docs/method.md §9): the Python standard library's own ``.py`` sources.

Text that no one here wrote (© Python Software Foundation, PSF License Agreement), installed with
the interpreter the project's setup uses, never downloaded at run time. Files are read in sorted
order of their path under ``sysconfig.get_paths()["stdlib"]``; every ``valid_every``-th file
(by that order) is held out, whole, for validation, so that no file is split between the two.
Tokens are bytes (vocabulary 256): no tokenizer to download or fit.

The corpus depends on the Python version (its stdlib): the stage records the version, the file
count and a SHA-256 of the bytes beside every result.
"""

from __future__ import annotations

import hashlib
import sysconfig
from dataclasses import dataclass
from pathlib import Path

import numpy as np

#: directories left out: tests (some are deliberately malformed or non-UTF-8 text), third-party
#: packages and caches
EXCLUDED_DIRS = frozenset({"test", "tests", "site-packages", "dist-packages", "__pycache__"})
#: byte between two files: a blank line, as files are joined in a source tree listing
FILE_SEPARATOR = b"\n\n"
#: the vocabulary of byte tokens
VOCAB = 256


@dataclass(frozen=True)
class Corpus:
    """The split corpus: ``train``/``valid`` uint8 arrays [T] of byte tokens, and what it is."""

    train: np.ndarray
    valid: np.ndarray
    root: str
    files_train: int
    files_valid: int
    sha256: str

    def describe(self) -> dict:
        return {
            "corpus": "python-stdlib",
            "license": "PSF-2.0",
            "root": self.root,
            "files_train": self.files_train,
            "files_valid": self.files_valid,
            "bytes_train": int(self.train.size),
            "bytes_valid": int(self.valid.size),
            "sha256": self.sha256,
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


def _utf8(path: Path) -> bytes | None:
    """The file's bytes when they are UTF-8 text, else None (left out)."""
    data = path.read_bytes()
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return data


def load_corpus(root=None, max_bytes: int = 0, valid_every: int = 10) -> Corpus:
    """The corpus under ``root`` (default :func:`stdlib_root`): files in sorted order until
    ``max_bytes`` (0: all), every ``valid_every``-th file to validation (the 10th, 20th, ...)."""
    if valid_every < 2:
        raise ValueError(f"valid_every must be >= 2 (one file in valid_every), got {valid_every}")
    root = stdlib_root() if root is None else Path(root)
    parts: dict[str, list[bytes]] = {"train": [], "valid": []}
    total, kept = 0, 0
    digest = hashlib.sha256()
    for path in source_files(root):
        data = _utf8(path)
        if data is None or not data:
            continue
        kept += 1
        side = "valid" if kept % valid_every == 0 else "train"
        parts[side].append(data)
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + data)
        total += len(data)
        if max_bytes and total >= max_bytes:
            break
    if not parts["valid"]:
        raise ValueError(
            f"corpus under {root}: {kept} files, none held out; "
            f"raise max_bytes or lower valid_every"
        )
    join = {k: np.frombuffer(FILE_SEPARATOR.join(v), dtype=np.uint8) for k, v in parts.items()}
    return Corpus(
        train=join["train"],
        valid=join["valid"],
        root=str(root),
        files_train=len(parts["train"]),
        files_valid=len(parts["valid"]),
        sha256=digest.hexdigest(),
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
