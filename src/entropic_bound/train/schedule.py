"""When a student stops training: the retirement schedule of the engine (docs/method.md §4).

At every evaluation (every ``eval_every`` steps) the engine hands over each active student's
windowed training loss (the mean minibatch MSE since the last evaluation) and its relative
risk R = loss / mean(Y²). A student is retired when

* **converged**: its windowed R ≤ ``converge_at`` · ε (ε: its task's ε_task under registration v2
  of the claims, docs/method.md §5b; an order of magnitude below the target,
  so the test R, measured afterwards on fresh data, sits safely below ε); or
* **plateaued**: ``patience`` evaluations in a row without a relative improvement of
  ``min_delta`` over its best loss, once its ``lr_drops`` learning-rate decays (×``lr_decay``,
  each taken at a plateau, which resets the patience count) are spent. A rank-deficient student
  sits on its Eckart–Young plateau by then; or
* the step budget ``max_steps`` is spent (the engine says so with ``last=True``).

The state is one tensor per quantity, indexed by the student's row in the layout, so that the
batch can be compacted without touching the schedule.
"""

from __future__ import annotations

import math

import numpy as np
import torch


class RetirementSchedule:
    """Per-student learning rate and plateau bookkeeping for ``n`` students."""

    def __init__(self, n: int, optim, epsilon, device="cpu"):
        """``epsilon``: ε of every student (a float, or an array [n]: each task's ε_task)."""
        f32 = dict(dtype=torch.float32, device=device)
        self.optim = optim
        # the product in float64, then float32: the threshold a scalar ε compared at before
        eps = np.broadcast_to(np.asarray(epsilon, dtype=np.float64), (n,))
        self.threshold = torch.as_tensor(optim.converge_at * eps, **f32)
        self.lr = torch.full((n,), optim.lr, **f32)
        self.best = torch.full((n,), math.inf, **f32)
        self.bad = torch.zeros(n, dtype=torch.long, device=device)
        self.drops = torch.zeros(n, dtype=torch.long, device=device)

    def update(
        self, ids: torch.Tensor, loss: torch.Tensor, risk: torch.Tensor, last: bool
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """One evaluation of students ``ids`` (windowed ``loss`` and ``risk``, both [len(ids)]).

        Returns ``(done, converged)``, boolean [len(ids)]: which students retire now, and which
        of them met the convergence test. Learning rates of students that hit a plateau with
        drops left are decayed in place.
        """
        o = self.optim
        converged = risk <= self.threshold[ids]
        improved = loss < self.best[ids] * (1 - o.min_delta)
        self.best[ids] = torch.where(improved, loss, self.best[ids])
        self.bad[ids] = torch.where(improved, 0, self.bad[ids] + 1)
        plateau = self.bad[ids] >= o.patience
        drop = plateau & (self.drops[ids] < o.lr_drops)
        self.lr[ids] = torch.where(drop, self.lr[ids] * o.lr_decay, self.lr[ids])
        self.drops[ids] += drop.long()
        self.bad[ids] = torch.where(drop, 0, self.bad[ids])
        done = converged | (plateau & ~drop) | torch.tensor(last, device=loss.device)
        return done, converged
