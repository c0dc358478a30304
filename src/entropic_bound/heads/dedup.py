"""Near-duplicate text between the held-out and the training side of a corpus (docs/method.md
§9, "Corpus"): shingled hashing.

A document's *shingles* are its runs of ``k`` consecutive words (maximal runs of non-space
bytes), each hashed to 64 bits: a word by CRC-32, a run by a polynomial over its words'
hashes (mod 2⁶⁴), so the hash is a function of the text alone, the same on every machine and
in every process (Python's ``hash`` of bytes is salted per process). A held-out document's
*containment* in the training text is the share of its distinct shingles that occur anywhere in
the training side; a document whose containment reaches ``max_containment`` is a near-copy
(a generated table beside its siblings, a vendored module, a page included in another) and is
left out of the held-out text. Containment, not Jaccard similarity: a held-out file pasted
into a larger training file is a copy however much the training file adds.

CRC-32 collisions between distinct words (about one in 4·10⁹ pairs) can only raise a
containment by a few shingles in a million: immaterial to a threshold near ½.
"""

from __future__ import annotations

import re
import zlib

import numpy as np

#: words per shingle: long enough that shared idioms (``def __init__(self):``, a troff macro
#: line) rarely make a whole shingle, short enough that a near-copy with its own names keeps most
SHINGLE_WORDS = 8
#: a held-out document with this share of its shingles in the training text is a near-copy
MAX_CONTAINMENT = 0.5
#: the polynomial's multiplier (odd, so the map is a bijection mod 2⁶⁴ at each step)
_MULT = np.uint64(0x9E3779B97F4A7C15)
_WORD = re.compile(rb"\S+")


def shingles(data: bytes, k: int = SHINGLE_WORDS) -> np.ndarray:
    """The distinct 64-bit hashes of the ``k``-word runs of ``data``, sorted: [m] uint64. A
    document of fewer than ``k`` words has one shingle, all of it (so it can still match)."""
    words = np.fromiter((zlib.crc32(w) for w in _WORD.findall(data)), dtype=np.uint64, count=-1)
    if words.size == 0:
        return np.zeros(0, dtype=np.uint64)
    k = min(k, words.size)
    h = np.zeros(words.size - k + 1, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(k):
            h = h * _MULT + words[j : j + h.size] + np.uint64(1)
    return np.unique(h)


def training_shingles(docs, k: int = SHINGLE_WORDS) -> np.ndarray:
    """The sorted distinct shingles of every document of ``docs`` (bytes each): [m] uint64."""
    parts = [shingles(d, k) for d in docs]
    return np.unique(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.uint64)


def containment(data: bytes, train: np.ndarray, k: int = SHINGLE_WORDS) -> float:
    """The share of ``data``'s distinct shingles found in ``train`` (sorted, from
    :func:`training_shingles`); 0 for a document without words."""
    mine = shingles(data, k)
    if mine.size == 0 or train.size == 0:
        return 0.0
    pos = np.searchsorted(train, mine).clip(max=train.size - 1)
    return float(np.mean(train[pos] == mine))
