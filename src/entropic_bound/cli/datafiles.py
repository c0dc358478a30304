"""What a user's file holds: X and Y by the CLI's rules (a .npz's X/Y, a task file's
X_train/Y_train, or two .npy files), a task file's ``meta``, and ``inspect``'s statistics.
Reading itself, with its bounds, is :mod:`.npyio`; a task file that holds the seeds of its data
instead of X/Y, :mod:`.taskfiles` (through the tasks package)."""

from __future__ import annotations

import json
import math
import os

import numpy as np

from entropic_bound.cli.npyio import (
    SMALL_BYTES,
    ArrayRef,
    InputError,
    iter_rows,
    open_arrays,
    read_small,
    rows_per_chunk,
)
from entropic_bound.cli.taskfiles import made_again
from entropic_bound.tasks.files import DATA_KEYS, seed_only  # torch-free

__all__ = [
    "InputError",
    "array_stats",
    "causal_mask",
    "inspect_file",
    "task_meta",
    "xy_members",
    "xy_pair",
]


def xy_pair(x: str, y: str) -> tuple[ArrayRef, ArrayRef]:
    """X and Y from two .npy files (``--x``, ``--y``)."""
    pair = []
    for flag, path in (("x", x), ("y", y)):
        kind, refs = open_arrays(path, f"--{flag} {path}")
        if kind != "npy":
            raise InputError(
                f"--{flag} {path} is a .npz archive, not a .npy file",
                f"pass the archive as FILE: `entropic-bound predict {path}`",
            )
        ref = next(iter(refs.values()))
        ref.name = flag.upper()
        pair.append(ref)
    return pair[0], pair[1]


def xy_members(path: str, x_key=None, y_key=None, split=None):
    """X, Y and the task meta (or None) from a .npz: ``x_key``/``y_key``, else X_<split>/Y_<split>,
    else X/Y, else a task file's X_train/Y_train."""
    kind, refs = open_arrays(path)
    if kind == "npy":
        raise InputError(
            f"{path} is a single .npy array, but predict needs both X and Y",
            "pass them as --x X.npy --y Y.npy, or save both into one .npz",
        )
    if x_key or y_key:
        keys = (x_key or "X", y_key or "Y")
    elif split:
        keys = (f"X_{split}", f"Y_{split}")
    elif "X" in refs or "Y" in refs:
        keys = ("X", "Y")
    else:
        keys = ("X_train", "Y_train")
    missing = [k for k in keys if k not in refs]
    if missing and seed_only(refs) and set(missing) <= set(DATA_KEYS):
        data, _ = made_again(path, refs)  # a task file without its data: made from its seeds
        refs, missing = {**data, **refs}, []
    if missing:
        have = ", ".join(sorted(refs)) or "nothing"
        what = (
            " and ".join(missing) + (" arrays" if len(missing) > 1 else " array")
            if x_key or y_key or split or len(missing) < 2
            else "X and Y arrays (nor X_train and Y_train)"
        )
        raise InputError(
            f"{path} has no {what} (it holds: {have})",
            "save the inputs as X and the targets as Y of shape [B, n, d] "
            "(a task file's X_train/Y_train also work; --x-key/--y-key pick others)",
        )
    return refs[keys[0]], refs[keys[1]], f"{path} [{keys[0]}, {keys[1]}]", task_meta(refs)


def causal_mask(path: str, n: int) -> bool | None:
    """Whether the ``mask`` member of a .npz says causal attention: an [n, n] array of 0/1 (or
    bool) that is the lower triangle (True), all ones (False); None when there is no member.
    Any other mask is refused: the predictors know the causal structure only."""
    kind, refs = open_arrays(path)
    ref = refs.get("mask") if kind == "npz" else None
    if ref is None:
        return None
    if ref.shape != (n, n) or not ref.numeric or ref.nbytes > 64 * SMALL_BYTES:
        raise InputError(
            f"mask in {path} has shape {ref.shape} and dtype {ref.dtype}",
            f"save the attention mask as an [n, n] = [{n}, {n}] array of 0 and 1",
        )
    mask = np.concatenate([b for _, b in iter_rows(ref, n)]).astype(np.float64)
    lower = np.tril(np.ones((n, n)))
    if np.array_equal(mask, lower):
        return True
    if np.array_equal(mask, np.ones((n, n))):
        return False
    raise InputError(
        f"mask in {path} is neither causal (the lower triangle, diagonal included) nor all ones",
        "the predictors know causal masks only; save mask = numpy.tril(numpy.ones((n, n)))",
    )


def task_meta(refs: dict[str, ArrayRef]) -> dict | None:
    """A task file's ``meta`` (a JSON string), when it is present, small and valid; else None."""
    ref = refs.get("meta")
    if ref is None or ref.dtype is None or ref.dtype.kind not in "US" or ref.shape:
        return None
    value = read_small(ref)
    try:
        meta = json.loads(str(value)) if value is not None else None
    except ValueError:
        return None
    return meta if isinstance(meta, dict) else None


def array_stats(ref: ArrayRef) -> dict:
    """mean, std, min, max over the finite entries, and NaN/Inf counts, chunk by chunk (chunks
    merged by Chan et al.'s pairwise update, so a large mean costs no precision)."""
    count = nan = inf = 0
    mean = m2 = 0.0
    lo, hi = math.inf, -math.inf
    with np.errstate(all="ignore"):  # huge values give inf, reported as such
        for _, block in ref.rows(rows_per_chunk(ref.shape)):
            a = np.asarray(block, dtype=np.float64).ravel()
            if ref.dtype.kind == "f":
                nan += int(np.isnan(a).sum())
                inf += int(np.isinf(a).sum())
                a = a[np.isfinite(a)]
            if a.size:
                m = float(np.mean(a))
                dev = a - m
                k, total = a.size, count + a.size
                delta = m - mean
                m2 += float(np.dot(dev, dev)) + delta * delta * count * k / total
                mean += delta * k / total
                count = total
                lo, hi = min(lo, float(a.min())), max(hi, float(a.max()))
    if not count:
        return {"mean": None, "std": None, "min": None, "max": None, "nan": nan, "inf": inf}
    std = math.sqrt(m2 / count) if math.isfinite(m2) else math.inf
    return {"mean": mean, "std": std, "min": lo, "max": hi, "nan": nan, "inf": inf}


def inspect_file(path: str) -> dict:
    """Shapes, dtypes, statistics and a task file's meta of every array in ``path``."""
    kind, refs = open_arrays(path)
    damaged = next((r for r in refs.values() if r.damaged), None)
    if damaged is not None:  # sizes that contradict each other: no array of it is trusted
        raise InputError(damaged.problem, "re-create the file")
    made = made_again(path, refs)[0] if seed_only(refs) else {}
    arrays, meta = [], None
    for name, ref in {**made, **refs}.items():
        row = {
            "name": name,
            "shape": list(ref.shape),
            "dtype": str(ref.dtype) if ref.dtype else None,
        }
        if getattr(ref, "problem", None):  # a made-again array (ArraySource) has none
            row["problem"] = ref.problem
        elif ref.numeric:
            row.update(array_stats(ref))
        elif ref.dtype.kind in "US" and not ref.shape and ref.nbytes <= SMALL_BYTES:
            text = str(read_small(ref))
            meta_here = task_meta({"meta": ref}) if name == "meta" else None
            if meta_here is not None:
                meta, row["note"] = meta_here, "JSON, shown below"
            else:
                row["value"] = text[:200]
        else:
            row["note"] = "not numeric; statistics skipped"
        arrays.append(row)
    if not arrays:
        raise InputError(f"{path} holds no arrays", "save arrays into it with numpy.savez")
    return {
        "file": path,
        "kind": kind,
        "bytes": os.path.getsize(path),
        "arrays": arrays,
        "meta": meta,
        "made_again": list(made),  # shown in the order of a file that holds them
    }
