"""Near-copies between held-out and training text (docs/method.md §9, "Corpus"): shingles and
containment solved by hand."""

import numpy as np

from entropic_bound.heads.dedup import containment, shingles, training_shingles


def test_shingles_are_the_distinct_k_word_runs():
    # 5 words, k = 3: three runs, one of them twice in "a b c a b c"
    assert shingles(b"one two three four five", 3).size == 3
    assert shingles(b"a b c a b c", 3).size == 3  # (a b c), (b c a), (c a b)
    # whitespace is not a word: the same runs however the words are spaced
    assert np.array_equal(shingles(b"a  b\tc\nd", 2), shingles(b"a b c d", 2))
    # fewer words than k: the whole document is one shingle; no words, none
    assert shingles(b"x y", 8).size == 1 and shingles(b"  \n", 8).size == 0


def test_the_hash_is_a_function_of_the_text_alone():
    a = shingles(b"def f(x):\n    return x + 1\n", 3)
    assert np.array_equal(a, shingles(b"def f(x):\n    return x + 1\n", 3))
    assert a.dtype == np.uint64 and np.all(np.diff(a.astype(np.float64)) >= 0)  # sorted
    # a known value: the same on every machine (CRC-32 words, a fixed polynomial)
    assert int(shingles(b"a", 1)[0]) == 3904355908


def test_containment_by_hand():
    train = training_shingles([b"w1 w2 w3 w4 w5 w6", b"x1 x2 x3"], 3)
    assert containment(b"w2 w3 w4 w5", train, 3) == 1.0  # both its runs are in training
    # runs (w4 w5 w6), (w5 w6 n1), (w6 n1 n2): one of three
    assert containment(b"w4 w5 w6 n1 n2", train, 3) == 1 / 3
    assert containment(b"n1 n2 n3", train, 3) == 0.0
    assert containment(b"", train, 3) == 0.0
    assert containment(b"a b c", training_shingles([], 3), 3) == 0.0
