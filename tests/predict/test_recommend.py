"""The library behind `entropic-bound predict`, called directly: recommend_rank, the one P_attn
accumulator, the bounded reader and the memory plan."""

from __future__ import annotations

import dataclasses
import zipfile

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from entropic_bound.cli.npyio import open_arrays, read_header
from entropic_bound.predict.attention import AttnAccumulator, predict_attention_native
from entropic_bound.predict.recommend import THRESHOLDS, Recommendation, Thresholds, recommend_rank
from entropic_bound.predict.scan import Plan, Settings, check_memory, make_plan
from entropic_bound.predict.sources import InputError
from entropic_bound.tasks.make import TaskSpec, make_task


def _task(**kw):
    t = make_task(TaskSpec(**{"seed": 0, "n_test": 16, **kw}))
    return t["X_train"], t["Y_train"]


def test_recommend_rank_linear_attention():
    X, Y = _task(rung="L3", r_star=3, n=12, d=8, n_train=256)
    rec = recommend_rank(X, Y)
    assert isinstance(rec, Recommendation)
    assert (rec.rank, rec.predictor, rec.estimator, rec.confidence) == (
        3,
        "P_attn",
        "energy_0.99",
        "exact",
    )
    assert "col(A)" in rec.why and rec.regime.startswith("d < n = 12")
    assert rec.report["recommendation"]["min_qk_rank"] == 3
    assert torch.is_tensor(torch.as_tensor(X))  # torch tensors are accepted as well
    assert recommend_rank(torch.as_tensor(X), torch.as_tensor(Y), no_static=True).rank == 3


def test_recommend_rank_static_and_invert():
    X, Y = _task(rung="L0", r_star=2, n=6, d=6, n_train=300)
    assert (recommend_rank(X, Y).predictor, recommend_rank(X, Y).rank) == ("P_static", 2)
    X, Y = _task(rung="L4", r_star=2, n=6, d=8, n_train=200, value_map="known")
    rec = recommend_rank(X, Y, value_known=True, no_static=True)
    assert (rec.predictor, rec.rank, rec.confidence) == ("P_invert", 2, "exact at zero noise")


def test_thresholds_are_one_frozen_commented_table():
    assert THRESHOLDS == Thresholds()
    with pytest.raises(dataclasses.FrozenInstanceError):
        THRESHOLDS.static_share = 0.5
    assert {f.name for f in dataclasses.fields(Thresholds)} == {
        "static_share",
        "softmax_index",
        "noise_at_scale",
        "dominance",
        "softmax_positive",
        "softmax_row_spread",
    }


def test_bad_options_name_the_option():
    X, Y = _task(rung="L3", r_star=3, n=12, d=8, n_train=64)
    for kw, says in (
        ({"seed": -1}, "--seed -1"),
        ({"static_oversample": 0}, "--static-oversample 0"),
        ({"estimator": "energy_7"}, "--estimator"),
    ):
        with pytest.raises(InputError, match=says):
            recommend_rank(X, Y, **kw)


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 40), st.sampled_from([(4, 6), (6, 6), (9, 6)]))
def test_accumulator_in_batches_is_predict_attention_native(batch, nd):
    """Streamed in any batch size, the accumulator's spectrum is the one-batch P_attn (to
    rounding), and one batch is predict_attention_native bitwise."""
    n, d = nd
    rng = np.random.default_rng(batch)
    X, Y = rng.standard_normal((2, 60, n, d))
    want = predict_attention_native(X, Y)["spectrum"]
    acc = AttnAccumulator(n, d, diagnostics=True)
    Xt, Yt = torch.from_numpy(X)[None], torch.from_numpy(Y)[None]
    for lo in range(0, 60, batch):
        acc.add(Xt[:, lo : lo + batch], Yt[:, lo : lo + batch], np.arange(lo, min(lo + batch, 60)))
    np.testing.assert_allclose(acc.spectrum()[0].numpy(), want, rtol=0, atol=1e-10 * want[0])
    one = AttnAccumulator(n, d)
    one.add(Xt, Yt)
    assert np.array_equal(one.spectrum()[0].numpy(), want)
    assert acc.seen == 60 and 0 <= acc.zmax_index < 60


def test_accumulator_names_the_singular_sequence():
    X = np.random.default_rng(0).standard_normal((1, 10, 5, 3))
    X[0, 7] = 1.0
    with pytest.raises(ValueError, match="sequence 17 has linearly dependent"):
        AttnAccumulator(5, 3).add(torch.from_numpy(X), torch.from_numpy(X), np.arange(10, 20))


def test_header_checked_against_the_bytes_that_follow(tmp_path):
    """A hand-made case: 2×3×4 float64 needs 192 bytes; 191 after the header are refused."""
    np.save(tmp_path / "a.npy", np.zeros((2, 3, 4)))
    raw = (tmp_path / "a.npy").read_bytes()
    with open(tmp_path / "a.npy", "rb") as fh:
        shape, fortran, dtype, header = read_header(fh, "a", len(raw))
    assert (shape, fortran, dtype, header) == ((2, 3, 4), False, np.dtype("<f8"), len(raw) - 192)
    with open(tmp_path / "a.npy", "rb") as fh, pytest.raises(InputError, match="truncated"):
        read_header(fh, "a", len(raw) - 1)


def test_stored_member_bounded_by_its_own_size(tmp_path):
    """The member X declares 4 rows but holds 2: it must not read Y's bytes as its own."""
    np.save(tmp_path / "x.npy", np.zeros((2, 3, 4)))
    raw = (tmp_path / "x.npy").read_bytes().replace(b"(2, 3, 4)", b"(4, 3, 4)")
    with zipfile.ZipFile(tmp_path / "d.npz", "w") as zf:
        zf.writestr("X.npy", raw)
        zf.writestr("Y.npy", np.ones((64, 3, 4)).tobytes())
    _, refs = open_arrays(str(tmp_path / "d.npz"))
    assert "truncated" in refs["X"].problem


def test_memory_plan_refuses_with_figures():
    plan = Plan(
        1,
        2,
        40000,
        None,
        1,
        memory={"reading": 0, "P_attn": 13 * 10**9, "P_static": 0, "P_invert": 0},
    )
    with pytest.raises(InputError, match=r"d = 40000 needs ≈ 12.8 GB for P_attn's d × d sums"):
        check_memory(plan, 4 * 10**9)
    check_memory(plan, None)  # unknown memory: no refusal
    p = make_plan(Settings(), 10**4, 8, 8)
    check_memory(p, 10**9)  # a small problem fits in 1 GB


def test_centring_beyond_the_matmul_size_is_the_same_to_rounding():
    from entropic_bound.predict.attention import CENTRING_MATMUL_MAX, attention_native_tokens
    from entropic_bound.predict.base import centering

    n = CENTRING_MATMUL_MAX + 44
    X = torch.from_numpy(np.random.default_rng(3).standard_normal((1, 2, n, 5)))
    torch.testing.assert_close(
        attention_native_tokens(X), centering(n, X.dtype) @ X, rtol=0, atol=1e-12
    )
