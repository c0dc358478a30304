"""The causal fit's own knee (predict/causal.py): the residual with the fitted kernel cut to each
rank, in the fit's data and on other windows, and the least rank within a share of the
ablation's residual; the fit started from an earlier kernel."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from entropic_bound.predict.causal import (
    fit_causal,
    fit_knee,
    held_out_truncation,
    prefix_apply,
)


def _first_order(X, A, V, V0):
    """y_i = x̄_{≤i}ᵀ V0 + x_iᵀ A Q_i V: the first-order causal softmax form, exactly."""
    Xt = torch.tensor(X)
    apply, mean = prefix_apply(Xt, "covariance")
    return (mean @ torch.tensor(V0) + apply(Xt @ torch.tensor(A)) @ torch.tensor(V)).numpy()


def _data(seed: int, rank: int, B: int = 96, n: int = 12, d: int = 6, dv: int = 3, noise=0.0):
    """First-order causal softmax data of a rank-``rank`` kernel: the kernel and value maps are
    drawn first, so one seed gives the same head whatever B is."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((d, rank)) @ rng.standard_normal((rank, d))
    V, V0 = rng.standard_normal((d, dv)), rng.standard_normal((d, dv))
    X = rng.standard_normal((B, n, d))
    Y = _first_order(X, A, V, V0)
    return X, Y + noise * Y.std() * rng.standard_normal(Y.shape)


def test_fit_knee_solved_by_hand():
    assert fit_knee([1.0, 0.5, 0.105, 0.1, 0.1]) == 2  # 0.005 ≤ 1 % of the 0.9 gap
    assert fit_knee([1.0, 0.5, 0.105, 0.1, 0.1], 0.001) == 3
    assert fit_knee([1.0, 0.3, 0.2, 0.25, 0.3]) == 2  # held out: the least, not the last
    assert fit_knee([0.5, 0.5, 0.5]) == 0  # cutting everything costs nothing


@given(st.lists(st.floats(0, 10), min_size=1, max_size=12), st.floats(0, 1))
@settings(max_examples=200, deadline=None)
def test_fit_knee_is_a_rank_of_the_curve_within_its_share(curve, fraction):
    r = fit_knee(curve, fraction)
    c = np.asarray(curve)
    assert 0 <= r < len(c)
    assert c[r] - c.min() <= fraction * (c[0] - c.min()) + 1e-12 or c[0] <= c.min()


def test_truncation_curve_and_knee_are_exact_on_a_rank_2_kernel():
    """First-order data of a rank-2 kernel: the fit's residual is 0 from rank 2 on and the
    ablation's at rank 0; the knee is 2, in the fit's data and on other windows."""
    X, Y = _data(31, rank=2)
    fit = fit_causal(X, Y, prefix="covariance")
    curve = (fit.curve / fit.target).numpy()
    assert curve[0] > 0.01 and curve[1] > 1e-3 and curve[2:].max() < 1e-10
    assert fit_knee(curve) == 2
    X2, Y2 = _data(31, rank=2, B=192)  # the same kernel on other windows
    held = held_out_truncation(fit, X2[96:], Y2[96:], "covariance").numpy()
    assert held[2:].max() < 1e-10 and fit_knee(held) == 2


def test_held_out_curve_does_not_reward_fitted_noise():
    """With noise, the fit's own curve keeps falling past the true rank (its extra directions fit
    noise), while on other windows they stop helping: the held-out knee is the true rank."""
    X, Y = _data(32, rank=2, B=192, noise=0.3)
    fit = fit_causal(X[::2], Y[::2], prefix="covariance")
    own = (fit.curve / fit.target).numpy()
    held = held_out_truncation(fit, X[1::2], Y[1::2], "covariance").numpy()
    assert own[-1] < own[2]  # in its own data the noise directions lower the residual
    assert fit_knee(held) == 2 and held[2:].min() >= held[2] - 1e-3


def test_a_fit_started_from_its_own_kernel_stops_where_it_starts():
    X, Y = _data(33, rank=2)
    fit = fit_causal(X, Y, prefix="covariance")
    again = fit_causal(X, Y, prefix="covariance", starts=1, init=fit.kernel)
    assert again.iterations <= 20 and again.resid / again.target < 1e-12
    top = again.spectrum[:2] / again.spectrum[0]
    np.testing.assert_allclose(top, fit.spectrum[:2] / fit.spectrum[0], rtol=1e-6)
    assert len(fit.starts) >= 1 and fit.starts[0][1].shape == (6,)
    with pytest.raises(ValueError, match="supply more sequences"):
        fit_causal(X[:1, :3], Y[:1, :3], init=fit.kernel)
