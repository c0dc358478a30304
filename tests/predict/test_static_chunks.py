"""P_static and P_attn read their sequences in chunks (predict/static.py's ``STATIC_CHUNK_BYTES``):
a float32 X and Y are widened to float64 a chunk at a time, and every sum over sequences is
added in order, so the chunked results are the whole float64 products' floats, bitwise."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from entropic_bound.predict.stage import attention_native_pinv_of, attention_native_spectrum_of
from entropic_bound.predict.static import (
    STATIC_CHUNK_ALIGN,
    StaticLeastSquares,
    predict_static,
    static_chunk_rows,
    static_chunks,
)

WHOLE = 1 << 40  # rows: one chunk, the products of before


def _data(B: int, n: int, d: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((B, n, d)).astype(np.float32)
    Y = (X @ rng.standard_normal((d, d)).astype(np.float32)).astype(np.float32)
    Y += 0.1 * rng.standard_normal((B, n, d)).astype(np.float32)
    return X, Y, rng.standard_normal((B, n, d))


def _static(X, Y, noise, rows, method):
    lsq = StaticLeastSquares(X, keep_gram=True, chunk_rows=rows)
    out = predict_static(X, Y, method=method, lstsq=lsq, noise=noise, scale=0.3)
    clean = predict_static(X, Y, method=method, lstsq=lsq)
    return lsq.gram, out, clean


def _assert_same(a, b):
    ga, oa, ca = a
    gb, ob, cb = b
    assert torch.equal(ga, gb)
    for key in ("M_hat", "spectrum", "static_fit_share"):
        assert np.array_equal(oa[key], ob[key]), key
        assert np.array_equal(ca[key], cb[key]), key


def test_chunk_rows_keep_the_shipped_configs_whole():
    """d = n = 64 at B = 16 384 and n = 128, d = 64 at B = 8192 are one chunk; d = n = 128 four."""
    assert static_chunk_rows(16384, 64 * 64) == 16384
    assert static_chunk_rows(8192, 128 * 64) == 8192
    assert static_chunk_rows(16384, 128 * 128) == 4096
    assert static_chunk_rows(10**6, 10**9) == STATIC_CHUNK_ALIGN  # at least one aligned chunk
    assert static_chunks(130, 64) == [(0, 64), (64, 130)]  # a short tail joins the chunk before


@pytest.mark.parametrize("method", ["dense", "iterative"])
def test_chunked_static_equals_the_whole_float64_products(method):
    """Float32 X and Y in chunks of 64 and 192 rows (a tail of 1 joined), against the float64
    arrays in one product, both routes, clean and noisy."""
    X, Y, noise = _data(1025, 8, 8)
    whole = _static(X.astype(np.float64), Y.astype(np.float64), noise, WHOLE, method)
    for rows in (64, 192):
        _assert_same(_static(X, Y, noise, rows, method), whole)


@settings(max_examples=25, deadline=None)
@given(
    k=st.integers(1, 12),
    B=st.integers(300, 1200),
    shape=st.sampled_from([(4, 8), (6, 5), (8, 8), (12, 4)]),
    seed=st.integers(0, 2**16),
)
def test_any_aligned_chunk_gives_the_same_floats(k, B, shape, seed):
    """Chunks of any multiple of STATIC_CHUNK_ALIGN rows, any B ≥ n·d (any tail): P_static's gram,
    operator summary and spectra, and P_attn's X̃⁺ and spectrum, equal the whole products'."""
    n, d = shape
    X, Y, noise = _data(B, n, d, seed)
    rows = k * STATIC_CHUNK_ALIGN
    X64, Y64 = X.astype(np.float64), Y.astype(np.float64)
    _assert_same(
        _static(X, Y, noise, rows, "iterative"), _static(X64, Y64, noise, WHOLE, "iterative")
    )
    pinv = attention_native_pinv_of(X64, rows=WHOLE)
    chunked = attention_native_pinv_of(X, rows=rows)
    assert torch.equal(chunked, pinv)
    whole = attention_native_spectrum_of(pinv, Y64 + 0.3 * noise, rows=WHOLE)
    assert np.array_equal(attention_native_spectrum_of(chunked, Y, noise, 0.3, rows=rows), whole)
