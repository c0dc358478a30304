"""What each of ``predict``'s confidence words promises about the truth (docs/method.md §3,
"How confident the answer is"), and whether a word kept it.

A word is a promise about the rank the answer names: ``exact`` (and the other words of
:data:`EQUAL_WORDS`): the answer is the truth; ``upper bound``: at least it; ``lower bound``: at
most it; ``approximate (floor)``: the truth lies between the answer and the gap the floor-aware
cut read (the floor); any other word (``low``, ``approximate (noise)``) promises nothing.
"""

from __future__ import annotations

import numpy as np

#: the words that promise the truth itself, at least it, at most it, between two counts
EQUAL_WORDS = ("exact", "first-order", "exact at zero noise")
AT_LEAST, AT_MOST, BETWEEN = "upper bound", "lower bound", "approximate (floor)"
PROMISING = EQUAL_WORDS + (AT_LEAST, AT_MOST, BETWEEN)


def word_holds(word: str, answer: float, floor: float, knee: float, step: int) -> bool | None:
    """Whether ``word`` keeps its promise about ``knee`` (None: it promises nothing). On a grid
    of ``step`` (a rotary head's ranks are even) the knee stands for (knee − step, knee]."""
    low = knee - step + 1
    if word in EQUAL_WORDS:
        return low <= answer <= knee
    if word == AT_LEAST:
        return answer >= low
    if word == AT_MOST:
        return answer <= knee
    if word == BETWEEN:
        ends = [answer] if not np.isfinite(floor) else [answer, floor]
        return min(ends) <= knee and max(ends) >= low
    return None


def range_error(word: str, answer: float, floor: float, knee: float) -> float:
    """How far the answer, read with its word, lies from the knee: 0 inside the range the word
    names (``approximate (floor)``: between the answer and the floor), else the distance to it;
    every other word is read as the point it names."""
    if word == BETWEEN and np.isfinite(floor):
        lo, hi = min(answer, floor), max(answer, floor)
        return float(max(lo - knee, knee - hi, 0.0))
    return float(abs(answer - knee))
