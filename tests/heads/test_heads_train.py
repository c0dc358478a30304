"""The heads model's training length (docs/method.md §9, "Training length"): the schedule and
the stopping rule on curves solved by hand."""

import pytest

from entropic_bound.heads.train import learning_rate, plateaued

T = {"lr": 1e-3, "warmup": 10, "steps": 100, "min_lr_ratio": 0.1}


def test_constant_and_cosine_schedules():
    const = T | {"schedule": "constant"}
    assert learning_rate(4, const) == pytest.approx(5e-4)  # warm-up
    assert learning_rate(10, const) == learning_rate(99, const) == 1e-3
    cos = T | {"schedule": "cosine"}
    assert learning_rate(10, cos) == pytest.approx(1e-3)
    assert learning_rate(99, cos) == pytest.approx(1e-4, rel=1e-2)


def curve(losses, every=100):
    return [{"step": i * every, "valid_loss": v} for i, v in enumerate(losses)]


def test_the_plateau_rule_by_hand():
    t = {"warmup": 100, "plateau_window": 300, "plateau_delta": 0.01}
    # steps 0..500: best 2.0 up to step 200, best 1.995 at 500: fell 0.005 < 0.01 in 300 steps
    assert plateaued(curve([3.0, 2.5, 2.0, 2.1, 1.999, 1.995]), t)
    # fell 0.02 in the last 300 steps: not yet
    assert not plateaued(curve([3.0, 2.5, 2.0, 2.1, 1.99, 1.98]), t)
    # too early: step 300 < warm-up + window
    assert not plateaued(curve([3.0, 3.0, 3.0, 3.0]), t)
    # the rule off
    assert not plateaued(curve([3.0] * 10), t | {"plateau_window": 0})
