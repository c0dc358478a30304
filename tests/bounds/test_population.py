"""The population objective of the static classes (docs/method.md §5b, "Best-known bounds"):
the formula against a large Monte-Carlo sample, Eckart–Young's tail on L0, zero at r* from the
teacher's own factors, its range and scale invariance; the training risk from the sample's
moments equal to the risk over the sample."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from entropic_bound.bounds.moments import MomentBatch
from entropic_bound.bounds.optimise import BoundSettings, Problem, _Batch
from entropic_bound.bounds.population import population_bounds, population_risk
from entropic_bound.bounds.stage import tail_energy
from entropic_bound.bounds.starts import random_start
from entropic_bound.tasks.grid import TaskSpec
from entropic_bound.tasks.make import make_task
from entropic_bound.tasks.mixing import static_mixing


def _task(rung, r_star, n=5, d=4, n_train=64, sigma=0.0, seed=0):
    spec = TaskSpec(
        rung=rung, r_star=r_star, seed=seed, n=n, d=d, n_train=n_train, n_test=64, sigma=sigma
    )
    a = make_task(spec)
    return a, json.loads(str(a.pop("meta")))


def _mixing(arrays, meta, kernel):
    P = torch.as_tensor(arrays["P"], dtype=torch.float64)
    k = torch.as_tensor(np.asarray(kernel), dtype=torch.float64)
    return static_mixing(meta["class"], k, n=meta["n"], d=meta["d"], beta=meta["beta"], P=P)


@pytest.mark.parametrize("rung", ["L0", "L1", "L2"])
def test_the_formula_is_the_risk_of_a_large_sample_with_the_best_v(rung):
    """R(M') = 1 − cos²(M, M') is the relative risk of M' X V with V = c V* (c = ⟨M, M'⟩/‖M'‖²)
    on a large sample of X, within the sample's error; a V fitted on the sample does no better
    than that beyond the sample's error either."""
    arrays, meta = _task(rung, 3)
    start = random_start(meta, 2, 0, 0)
    M = _mixing(arrays, meta, arrays["kernel"])
    Ms = _mixing(arrays, meta, start.Q @ start.K.T)
    R = float(population_risk(M, Ms))
    g = torch.Generator().manual_seed(1)
    N, n, d = 100_000, meta["n"], meta["d"]
    X = torch.randn(N, n, d, generator=g, dtype=torch.float64)
    Vs = torch.as_tensor(arrays["V"], dtype=torch.float64)
    Y = M @ X @ Vs
    c = float((M * Ms).sum() / Ms.pow(2).sum())
    err = (Y - Ms @ X @ (c * Vs)).pow(2).sum((1, 2))
    power = Y.pow(2).sum((1, 2))
    mc = float(err.mean() / power.mean())
    se = float(torch.std(err / power.mean()) / N**0.5) + float(torch.std(power)) / N**0.5
    assert 0.05 < R < 1
    assert abs(mc - R) < 5 * se, (mc, R, se)
    # V free, fitted by least squares on the sample: the same risk up to O(d²/N)
    Z = (Ms @ X).reshape(-1, d)
    V_fit = torch.linalg.lstsq(Z, Y.reshape(-1, d)).solution
    fitted = float((Y - Ms @ X @ V_fit).pow(2).sum() / power.sum())
    assert fitted <= mc + 1e-12 and abs(fitted - R) < 5 * se + 2 * d * d / N


def test_l0_gives_the_tail_energy_and_no_optimiser_beats_it():
    arrays, meta = _task("L0", 4, n=6, d=6)
    s = BoundSettings(None, 200, 1e-12, 8)
    start = population_bounds([(arrays, meta)], [Problem(0, r) for r in (1, 2, 3)], s)
    tails = [tail_energy(meta["kernel_singular_values"], r) for r in (1, 2, 3)]
    # the kernel is stored in float32: its SVD's tail is the float64 spectrum's to ~1e-7
    np.testing.assert_allclose([r["R"] for r in start], tails, rtol=1e-6)
    randoms = [Problem(0, r, random_start(meta, r, 0, 0)) for r in (1, 2, 3)]
    found = population_bounds([(arrays, meta)], randoms, s)
    assert all(f["R"] >= t - 1e-6 for f, t in zip(found, tails))


@pytest.mark.parametrize("rung", ["L0", "L1", "L2"])
def test_the_teachers_own_factors_at_r_star_give_zero(rung):
    arrays, meta = _task(rung, 3)
    rows = population_bounds([(arrays, meta)], [Problem(0, 3)], BoundSettings(None, 1, 1e-9, 4))
    assert abs(rows[0]["R"]) < 1e-12


def test_the_input_dependent_rungs_have_no_static_mixing():
    arrays, meta = _task("L4", 2)
    with pytest.raises(ValueError, match="no static mixing"):
        _mixing(arrays, meta, arrays["kernel"])


_matrix = arrays(np.float64, (4, 4), elements=st.floats(-10, 10, allow_nan=False))


@settings(max_examples=60, deadline=None)
@given(_matrix, _matrix, st.floats(1e-3, 1e3), st.booleans())
def test_population_risk_lies_in_0_1_and_ignores_the_students_scale(M, Ms, scale, flip):
    M, Ms = torch.as_tensor(M), torch.as_tensor(Ms)
    if float(M.norm()) < 1e-3 or float(Ms.norm()) < 1e-3:
        return  # the cosine of a zero matrix is undefined
    R = float(population_risk(M, Ms))
    assert -1e-12 <= R <= 1 + 1e-12
    c = -scale if flip else scale
    assert float(population_risk(M, c * Ms)) == pytest.approx(R, abs=1e-9)


@pytest.mark.parametrize("rung", ["L0", "L1", "L2"])
def test_the_moments_give_the_samples_own_risk(rung):
    """bounds/moments.py's risk equals the risk summed over the sample (n ≠ d, σ > 0)."""
    arrays, meta = _task(rung, 3, n=6, d=5, n_train=300, sigma=0.1)
    problems = [Problem(0, 2), Problem(0, 3, random_start(meta, 3, 0, 0))]
    direct = _Batch([(arrays, meta)], problems, None).risks().detach().numpy()
    moments = MomentBatch([(arrays, meta)], problems, None).risks().detach().numpy()
    np.testing.assert_allclose(moments, direct, rtol=1e-10)
