"""The retirement schedule on hand-made loss sequences (no training)."""

import pytest
import torch

from entropic_bound.train.engine import Optim
from entropic_bound.train.schedule import RetirementSchedule

OPT = Optim(lr=0.1, patience=2, min_delta=0.1, lr_decay=0.5, lr_drops=1, converge_at=0.1)
EPS = 1e-2  # converged once the windowed risk ≤ 0.1 · 1e-2 = 1e-3


def run(losses, risks=None, opt=OPT, last_at=None):
    """Feed one student's loss sequence; return (evaluation at which it retired or None,
    converged flag, learning rate after each evaluation)."""
    s = RetirementSchedule(1, opt, EPS)
    ids = torch.tensor([0])
    lrs = []
    for i, loss in enumerate(losses):
        risk = 1.0 if risks is None else risks[i]
        done, conv = s.update(
            ids, torch.tensor([loss]), torch.tensor([risk]), last=(i + 1 == last_at)
        )
        lrs.append(float(s.lr[0]))
        if bool(done[0]):
            return i, bool(conv[0]), lrs
    return None, False, lrs


def test_converged_student_retires_at_once():
    at, conv, lrs = run([1.0, 0.5], risks=[0.5, 1e-3])
    assert (at, conv) == (1, True)
    assert lrs == [pytest.approx(0.1)] * 2


def test_risk_just_above_the_margin_does_not_converge():
    at, conv, _ = run([1.0, 0.5, 0.25], risks=[0.5, 1.1e-3, 0.2])
    assert at is None and not conv


def test_plateau_drops_lr_then_retires():
    # improvement < 10 % counts as none: evaluations 1, 2 are bad -> lr drop (patience reset),
    # evaluations 3, 4 bad again with no drop left -> retired at evaluation 4, not converged
    at, conv, lrs = run([1.0, 0.95, 0.95, 0.94, 0.94, 0.5])
    assert (at, conv) == (4, False)
    assert lrs == pytest.approx([0.1, 0.1, 0.05, 0.05, 0.05])


def test_steady_improvement_never_retires():
    losses = [0.8**i for i in range(20)]
    at, _, lrs = run(losses)
    assert at is None and lrs[-1] == pytest.approx(0.1)


def test_improvement_resets_patience():
    # bad, good, bad, good ... never two bad evaluations in a row
    at, _, lrs = run([1.0, 1.0, 0.5, 0.5, 0.2, 0.2, 0.05])
    assert at is None and lrs[-1] == pytest.approx(0.1)


def test_last_evaluation_retires_everyone():
    at, conv, _ = run([1.0, 0.5, 0.2], last_at=3)
    assert (at, conv) == (2, False)


def test_two_drops_multiply():
    opt = Optim(lr=1.0, patience=1, min_delta=0.0, lr_decay=0.3, lr_drops=2, converge_at=0.1)
    at, _, lrs = run([1.0, 1.0, 1.0, 1.0], opt=opt)
    assert at == 3 and lrs == pytest.approx([1.0, 0.3, 0.09, 0.09])


def test_students_are_independent_and_indexed_by_id():
    s = RetirementSchedule(3, OPT, EPS)
    ids = torch.tensor([2, 0])  # a compacted batch: rows 2 and 0 still active
    for _ in range(3):
        done, _ = s.update(ids, torch.tensor([1.0, 1.0]), torch.tensor([1.0, 1.0]), False)
    assert float(s.lr[1]) == pytest.approx(0.1)  # row 1 untouched
    assert float(s.lr[0]) == pytest.approx(0.05) and float(s.lr[2]) == pytest.approx(0.05)
