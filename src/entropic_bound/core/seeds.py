"""Every random stream's seed, derived in one place (docs/method.md §4: bitwise reproducible).

A stream is named by a key that starts with the config's base seed; the key goes through
``numpy.random.SeedSequence`` and the first 32-bit word of its state seeds a torch generator.
Four streams existed before this module, each with its own key convention; their values are
kept bitwise (every cached table depends on them), so each is a named function here:

* ``task``: (base seed, r*, task seed), integer words; teacher kernel, V, P, X, E of a task,
  shared by every rung of one (r*, seed).
* ``student``: (base seed, task id, student class, student seed), every word hashed by CRC-32
  of its text (task ids and classes are strings); a student's init and minibatches. Its k-th
  restart (``train.classes.*.restarts``, docs/method.md §4) appends the word ``restart<k>``:
  restart 0 is the original key, bitwise.
* ``frontier``: (base seed, tag, ...) integer words, with a tag per stream of the frontier
  (:data:`FRONTIER_INPUTS` for X, E, V of an (n, seed); :data:`FRONTIER_KERNEL` for the kernel
  of an (r*, seed)) that keeps it apart from the task streams.
* ``bound_start``: (base seed, task id, :data:`BOUND_START`, rank, start index), hashed like
  ``student``: the k-th random start of a best-known class bound (docs/method.md §5b).
* ``noisy_copy``: (base seed, r*, task seed, :data:`NOISY_COPY`) seeds numpy's generator
  directly through the key's SeedSequence (not through a 32-bit word): the noise of the
  noisy copies of the data-only predictions.
* ``distortion_noise``: (base seed, :data:`DISTORTION_NOISE`, r*, task seed), integer words: the
  unit noise of the distorted targets of an L4 task (train/distortion.py), kept apart from the
  task's own stream.
"""

from __future__ import annotations

import zlib

import numpy as np
import torch

#: stream tags: primes that keep the frontier's and the noisy copies' streams apart from tasks'
FRONTIER_INPUTS = 7919
FRONTIER_KERNEL = 104729
NOISY_COPY = 31337
DISTORTION_NOISE = 15485863
#: the word that keeps the random starts of the best-known bounds apart from the students' streams
BOUND_START = "bound_start"


def stream_seed(*key, hashed: bool = False) -> int:
    """The 32-bit seed of stream ``key`` (integers; ``hashed``: any values, CRC-32 of text)."""
    words = [zlib.crc32(str(k).encode()) for k in key] if hashed else [int(k) for k in key]
    return int(np.random.SeedSequence(words).generate_state(1)[0])


def torch_stream(*key, hashed: bool = False) -> torch.Generator:
    """A torch generator seeded by :func:`stream_seed`."""
    return torch.Generator().manual_seed(stream_seed(*key, hashed=hashed))


def task_stream(base_seed: int, r_star: int, seed: int) -> torch.Generator:
    return torch_stream(base_seed, r_star, seed)


def student_stream(
    base_seed: int, task_id: str, student_class: str, seed: int, restart: int = 0
) -> torch.Generator:
    key = (base_seed, task_id, student_class, seed) + ((f"restart{restart}",) if restart else ())
    return torch_stream(*key, hashed=True)


def bound_start_stream(base_seed: int, task_id: str, rank: int, index: int) -> torch.Generator:
    return torch_stream(base_seed, task_id, BOUND_START, rank, index, hashed=True)


def frontier_stream(base_seed: int, tag: int, *key: int) -> torch.Generator:
    return torch_stream(base_seed, tag, *key)


def noisy_copy_rng(base_seed: int, r_star: int, seed: int) -> np.random.Generator:
    return np.random.default_rng([base_seed, r_star, seed, NOISY_COPY])


def distortion_noise_stream(base_seed: int, r_star: int, seed: int) -> torch.Generator:
    return torch_stream(base_seed, DISTORTION_NOISE, r_star, seed)
