"""The trained students' factors (Q, K, V) a training job keeps for the best-known class bounds
(docs/method.md §5b, "Best-known bounds"): one ``.npz`` per job, the students of the rung's own
class at the ranks the bounds need (``bounds.stage.bound_ranks``, r < r*).

The file holds, for S students: ``task_id`` [S] (text), ``rank``, ``seed`` [S] (int64), ``Q``,
``K`` [S, k, w] (float32; w the largest rank kept, columns beyond a student's rank zero) and
``V`` [S, d, d]. The parameters are those of the run the metrics table keeps (with restarts, the
one of least training MSE), so they reproduce the student's R. Torch-free: numpy and pandas.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: what a factors file holds, in order
FACTOR_KEYS = ("task_id", "rank", "seed", "Q", "K", "V")
#: the columns of the in-memory factors table (one row per student; Q, K, V arrays)
FACTOR_COLUMNS = ("task_id", "rank", "seed", "Q", "K", "V")


def factors_frame(rows: list[dict]) -> pd.DataFrame:
    """A factors table from rows (task_id, rank, seed, Q [k, rank], K, V [d, d])."""
    return pd.DataFrame(rows, columns=list(FACTOR_COLUMNS))


def final_factors(layout, shapes, final) -> pd.DataFrame:
    """Every student's final parameters, one row each in layout order: ``layout`` the engine's
    StudentLayout, ``shapes`` its Shapes (``unpack``), ``final`` the flat parameters (a torch
    tensor); Q and K cut to the student's rank."""
    Q, K, V = (t.detach().cpu().numpy() for t in shapes.unpack(final))
    rows = [
        {
            "task_id": layout.task_ids[int(layout.task[s])],
            "rank": int(layout.rank[s]),
            "seed": layout.seed(s),
            "Q": Q[s, :, : int(layout.rank[s])].copy(),
            "K": K[s, :, : int(layout.rank[s])].copy(),
            "V": V[s].copy(),
        }
        for s in range(len(layout))
    ]
    return factors_frame(rows)


def save_factors(table: pd.DataFrame, path, provenance: dict | None = None) -> None:
    """Write a factors table (Q, K of each row [k, its rank]) as one ``.npz``, with the
    provenance sidecar of an artifact when ``provenance`` is given."""
    from entropic_bound.core.io import stamp, write_npz

    S = len(table)
    k = int(table["Q"].iloc[0].shape[0]) if S else 0
    d = int(table["V"].iloc[0].shape[0]) if S else 0
    width = int(table["rank"].max()) if S else 0
    Q = np.zeros((S, k, width), np.float32)
    K = np.zeros_like(Q)
    for i, (q, kk) in enumerate(zip(table["Q"], table["K"])):
        Q[i, :, : q.shape[1]] = q
        K[i, :, : kk.shape[1]] = kk
    V = np.stack(list(table["V"])).astype(np.float32) if S else np.zeros((0, d, d), np.float32)
    write_npz(
        path,
        task_id=np.array(list(table["task_id"]), dtype=str),
        rank=table["rank"].to_numpy(np.int64),
        seed=table["seed"].to_numpy(np.int64),
        Q=Q,
        K=K,
        V=V,
    )
    if provenance is not None:
        stamp(path, provenance)


def load_factors(path) -> pd.DataFrame:
    """A factors file back as a table: one row per student, Q and K cut to its rank. ValueError
    naming what is wrong with a file that is not one."""
    try:
        with np.load(path, allow_pickle=False) as z:
            missing = [k for k in FACTOR_KEYS if k not in z.files]
            if missing:
                raise ValueError(f"factors file {path} lacks {', '.join(missing)}")
            a = {k: z[k] for k in FACTOR_KEYS}
    except (OSError, EOFError) as exc:
        raise ValueError(f"factors file {path} is not a readable .npz ({exc})") from None
    S = len(a["task_id"])
    if any(len(a[k]) != S for k in FACTOR_KEYS) or a["Q"].shape != a["K"].shape:
        raise ValueError(f"factors file {path}: its arrays do not describe the same students")
    rows = [
        {
            "task_id": str(a["task_id"][i]),
            "rank": int(a["rank"][i]),
            "seed": int(a["seed"][i]),
            "Q": a["Q"][i, :, : int(a["rank"][i])],
            "K": a["K"][i, :, : int(a["rank"][i])],
            "V": a["V"][i],
        }
        for i in range(S)
    ]
    return factors_frame(rows)
