"""The static rungs' best bounds read P_static's Σ xᵀx (tasks/files.py's ``write_gram``, written by predict) as
their moment G: bitwise the G they form from the sample in chunks, so the bounds are the same."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from entropic_bound.bounds.best import rung_best_bounds
from entropic_bound.bounds.moments import teacher_moments, with_moments
from entropic_bound.bounds.stage import rung_bounds
from entropic_bound.config.load import load_run_config
from entropic_bound.predict.stage import data_only_spectra
from entropic_bound.predict.static import StaticLeastSquares
from entropic_bound.tasks.files import load_task, read_gram
from entropic_bound.tasks.stage import write_tasks


def test_one_product_is_the_chunked_sum_at_d_64():
    """n = d = 64 (the large run's n·d = 4096), four chunks of the moments' 1024 rows."""
    gen = torch.Generator().manual_seed(0)
    X = torch.randn(4096, 64, 64, generator=gen, dtype=torch.float32)
    M = torch.randn(64, 64, generator=gen, dtype=torch.float32)
    V = torch.randn(64, 64, generator=gen, dtype=torch.float32)
    gram = StaticLeastSquares(X.to(torch.float64), keep_gram=True).gram[0]
    assert torch.equal(teacher_moments(X, M, V, gram=gram).G, teacher_moments(X, M, V).G)


@pytest.fixture(scope="module")
def stream(tmp_path_factory):
    """One noise-free stream at n = d = 24 (the products route: n·d > 256), 2500 sequences
    (three chunks of rows, the last partial), a static and an input-dependent rung."""
    config = Path(__file__).resolve().parents[2] / "config"  # the clone's: an installed wheel
    cfg = load_run_config(config / "quick.yaml", base=config / "config.yaml")  # has none
    cfg["task"] = {**cfg["task"], "n": 24, "d": 24, "n_train": 2500, "n_test": 64}
    cfg["task"] |= {"r_star": [2], "rungs": ["L1", "L3"], "lambdas": []}
    cfg["bounds"]["best"] |= {"static_iter": 20, "ranks": "knee"}
    folder = tmp_path_factory.mktemp("stream")
    paths = write_tasks(cfg, None, folder)
    gram = folder / "r2_s0.xtx.npz"
    with_gram = data_only_spectra(cfg, paths, gram_out=gram)
    return cfg, paths, gram, with_gram


def test_predict_is_unchanged_by_writing_the_gram(stream):
    cfg, paths, _, with_gram = stream
    before = data_only_spectra(cfg, paths)
    pd.testing.assert_frame_equal(
        before.drop(columns="spectrum"), with_gram.drop(columns="spectrum")
    )
    assert all(np.array_equal(a, b) for a, b in zip(before["spectrum"], with_gram["spectrum"]))


def test_the_moments_from_the_gram_are_the_sample_moments_bitwise(stream):
    _, paths, gram, _ = stream
    for path in paths:  # n = d: both rungs share X, and the file names both
        arrays, meta = load_task(path)
        G = read_gram(gram, meta["task_id"])
        assert G is not None and G.dtype == torch.float64
        if meta["class"] != "L1":
            continue
        made, read = with_moments(arrays, meta)["moments"], with_moments(arrays, meta, G)["moments"]
        assert made.route == read.route == "products"
        for key in ("G", "C", "y2"):
            assert torch.equal(getattr(made, key), getattr(read, key)), key
    assert read_gram(gram, "L1_r9_s0") is None  # another stream's task: formed, not read


def test_the_best_bounds_are_the_same_with_the_gram(stream):
    cfg, paths, gram, _ = stream
    static = [p for p in paths if p.name.startswith("L1_")]
    v2 = rung_bounds(cfg, static)
    before = rung_best_bounds(cfg, "L1", static, v2)
    after = rung_best_bounds(cfg, "L1", static, v2, grams={p: gram for p in static})
    pd.testing.assert_frame_equal(before, after, check_exact=True)
    assert before["R_lbfgs_teacher"].notna().any()  # the moment route ran
