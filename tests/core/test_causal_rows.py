"""core/causal.py: the rows the causal P_attn fit needs, by hand."""

from entropic_bound.core.causal import rows_needed


def test_rows_needed_by_hand():
    # d_model 64, d_head 16: 4096 + 2048 unknowns, 16 equations a row -> more than 384 rows
    assert rows_needed(64, 16) == 385
    # d_head 32: 8192 unknowns, 32 a row -> 257 (the 64 windows of 128 tokens have 8192)
    assert rows_needed(64, 32) == 257
    # d = 3, d_v = 1: 15 unknowns, one equation a row -> 16; the 2·d = 6 rows of W bind less
    assert rows_needed(3, 1) == 16
    # d_v large: each output's least squares (2·d unknowns) binds
    assert rows_needed(2, 100) == max((4 + 400) // 100, 4) + 1 == 5
