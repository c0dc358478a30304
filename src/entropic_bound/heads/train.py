"""Train the heads model (docs/method.md §9): AdamW, a linear warm-up, then a fixed learning
rate (``schedule: constant``) or a cosine decay (``cosine``); fixed seeds.

Deterministic on the CPU at a fixed thread count: one seeded generator draws the minibatch
windows, torch's seed the initial weights. The validation loss is measured on a fixed set of
evenly spaced held-out windows (:func:`corpus.windows`) every ``eval_every`` steps: the curve.

**Training length from the curve.** With ``plateau_window`` > 0, training stops at the first
evaluation at step t ≥ warmup + plateau_window whose best validation loss so far is less than
``plateau_delta`` (nats/byte) below the best up to step t − plateau_window: the curve has
flattened at this learning rate. ``steps`` is then a cap (the budget), and the facts record
which ended the run. At a fixed rate a flattening curve says that more steps at that rate buy
less than ``plateau_delta``; under a decaying rate the curve flattens because the rate does
(seed 0's curves, 2026-12-06, 4059078), which says nothing about the model, hence ``constant`` for the rule.
"""

from __future__ import annotations

import math
import time

import numpy as np
import torch

from entropic_bound.heads.corpus import Corpus, random_windows, windows
from entropic_bound.heads.model import ModelShape, TinyGPT, next_token_loss


def model_shape(cfg: dict) -> ModelShape:
    m = cfg["model"]
    return ModelShape(m["layers"], m["heads"], m["d_head"], m["context"], mlp_ratio=m["mlp_ratio"])


@torch.no_grad()
def mean_loss(model: TinyGPT, data: torch.Tensor, batch: int = 64) -> float:
    """Mean next-token loss over windows ``data`` [N, n+1], in batches (weights by token)."""
    model.eval()
    total = 0.0
    for i in range(0, data.shape[0], batch):
        chunk = data[i : i + batch]
        total += float(next_token_loss(model(chunk[:, :-1]), chunk[:, 1:])) * chunk.shape[0]
    return total / data.shape[0]


def learning_rate(step: int, t: dict) -> float:
    """Linear warm-up over ``warmup`` steps, then ``lr`` (``schedule: constant``) or a cosine
    decay to ``lr · min_lr_ratio`` over the remaining ``steps``."""
    if step < t["warmup"]:
        return t["lr"] * (step + 1) / t["warmup"]
    if t.get("schedule", "cosine") == "constant":
        return t["lr"]
    progress = (step - t["warmup"]) / max(1, t["steps"] - t["warmup"])
    floor = t["lr"] * t["min_lr_ratio"]
    return floor + 0.5 * (t["lr"] - floor) * (1 + math.cos(math.pi * progress))


def plateaued(curve: list[dict], t: dict) -> bool:
    """The stopping rule (module docstring) on the curve so far: rows {step, valid_loss}."""
    window, last = t.get("plateau_window", 0), curve[-1]["step"]
    if not window or last < t["warmup"] + window:
        return False
    before = min(r["valid_loss"] for r in curve if r["step"] <= last - window)
    now = min(r["valid_loss"] for r in curve)
    return before - now < t.get("plateau_delta", 0.0)


def train_model(cfg: dict, corpus: Corpus, device: str = "cpu", log=print):
    """Train :class:`TinyGPT` of ``cfg['model']`` by ``cfg['train']``.

    Returns ``(model, curve)``: ``curve`` rows {step, lr, train_loss (windowed mean since the
    last evaluation), valid_loss, seconds}; the last row is the final model (at ``steps``, or
    where the curve flattened: :func:`plateaued`).
    """
    t, shape = cfg["train"], model_shape(cfg)
    torch.manual_seed(cfg["seed"])
    rng = np.random.default_rng([cfg["seed"], 1])  # the minibatch stream
    model = TinyGPT(shape).to(device)
    opt = torch.optim.AdamW(
        model.parameters(), lr=t["lr"], betas=(0.9, 0.95), weight_decay=t["weight_decay"]
    )
    valid = torch.as_tensor(windows(corpus.valid, t["eval_sequences"], shape.context)).to(device)
    curve, window, start = [], [], time.perf_counter()

    def record(step: int) -> None:
        row = {
            "step": step,
            "lr": learning_rate(min(step, t["steps"] - 1), t),
            "train_loss": float(np.mean(window)) if window else math.nan,
            "valid_loss": mean_loss(model, valid),
            "seconds": time.perf_counter() - start,
        }
        curve.append(row)
        window.clear()
        log(
            f"step {step:5d}  train {row['train_loss']:.4f}  valid {row['valid_loss']:.4f}  "
            f"{row['seconds']:.0f} s"
        )

    record(0)
    for step in range(t["steps"]):
        model.train()
        batch = torch.as_tensor(random_windows(corpus.train, t["batch"], shape.context, rng))
        batch = batch.to(device)
        for group in opt.param_groups:
            group["lr"] = learning_rate(step, t)
        loss = next_token_loss(model(batch[:, :-1]), batch[:, 1:])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), t["grad_clip"])
        opt.step()
        window.append(float(loss.detach()))
        if (step + 1) % t["eval_every"] == 0 or step + 1 == t["steps"]:
            record(step + 1)
            if plateaued(curve, t):
                log(f"the validation curve flattened at step {step + 1}: stop")
                break
    model.eval()
    return model, curve
