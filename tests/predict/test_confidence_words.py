"""predict's confidence words as promises (predict/words.py): solved by hand, and properties."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from entropic_bound.predict.words import PROMISING, range_error, word_holds


def test_words_hold_as_promised_solved_by_hand():
    assert word_holds("exact", 3, np.nan, 3, 1)
    assert not word_holds("exact", 4, np.nan, 3, 1)
    assert word_holds("exact", 3, np.nan, 4, 2)  # the rotary knee 4 stands for (2, 4]
    assert not word_holds("upper bound", 2, np.nan, 3, 1)
    assert word_holds("upper bound", 3, np.nan, 3, 1)
    assert word_holds("lower bound", 2, np.nan, 3, 1)
    assert not word_holds("lower bound", 4, np.nan, 3, 1)
    assert word_holds("approximate (floor)", 5, 2, 3, 1)
    assert not word_holds("approximate (floor)", 5, 4, 3, 1)
    assert word_holds("low", 40, np.nan, 3, 1) is None
    assert word_holds("approximate (noise)", 3, np.nan, 3, 1) is None


def test_range_error_solved_by_hand():
    assert range_error("approximate (floor)", 5, 2, 3) == 0.0  # 3 lies in [2, 5]
    assert range_error("approximate (floor)", 5, 4, 1) == 3.0  # 1 lies 3 below [4, 5]
    assert range_error("approximate (floor)", 5, np.nan, 1) == 4.0  # no floor: the point
    assert range_error("upper bound", 2, np.nan, 7) == 5.0
    assert range_error("low", 9, 1, 7) == 2.0


@given(st.sampled_from(PROMISING), st.integers(0, 64), st.integers(0, 64))
def test_an_answer_equal_to_the_knee_keeps_every_promise(word, knee, floor):
    assert word_holds(word, knee, float(floor), knee, 1)


@given(st.sampled_from(PROMISING + ("low",)), st.integers(0, 64), st.integers(0, 64))
def test_range_error_is_zero_exactly_when_a_point_answer_is_the_knee(word, answer, knee):
    assert (range_error(word, answer, np.nan, knee) == 0) == (answer == knee)
