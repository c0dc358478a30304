"""Atomic writes and sidecar stamps (the stamp itself is made by config.provenance).

Every writer goes through a temporary file in the destination directory and an
``os.replace``, so an interrupted job never leaves a file that looks finished.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd


@contextlib.contextmanager
def atomic_path(path, suffix: str | None = None):
    """Yield a temporary path next to ``path``; rename it onto ``path`` on success."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(
        dir=path.parent,
        prefix=f".{path.name}.",
        suffix=suffix if suffix is not None else path.suffix,
    )
    os.close(fd)
    umask = os.umask(0)
    os.umask(umask)
    try:
        yield Path(tmp)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp creates 0600; results are for everyone to read
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def write_npz(path, **arrays) -> None:
    with atomic_path(path, ".npz") as tmp:
        np.savez(tmp, **arrays)


def write_table(df: pd.DataFrame, path, provenance: dict | None = None) -> None:
    """CSV or parquet by suffix; parquet carries the provenance in its schema metadata."""
    path = Path(path)
    with atomic_path(path) as tmp:
        if path.suffix == ".parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            table = pa.Table.from_pandas(df, preserve_index=False)
            if provenance is not None:
                meta = dict(table.schema.metadata or {})
                meta[b"entropic_bound"] = json.dumps(provenance).encode()
                table = table.replace_schema_metadata(meta)
            pq.write_table(table, tmp)
        else:
            df.to_csv(tmp, index=False)
    if provenance is not None:
        stamp(path, provenance)


#: where ``onerror`` puts the claims of a failed run, under results/<run_name>/
PARTIAL_DIR = "partial"


def clear_partial(run_dir) -> None:
    """Remove the partial claims of an earlier failed run (``onsuccess``, rule ``claims``)."""
    import shutil

    shutil.rmtree(Path(run_dir) / PARTIAL_DIR, ignore_errors=True)


def sidecar(path) -> Path:
    path = Path(path)
    return path.with_name(path.name + ".prov.json")


def write_json(path, obj) -> None:
    with atomic_path(path, ".json") as tmp:
        tmp.write_text(json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n")


def write_text(path, text: str, provenance: dict | None = None) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text)
    if provenance is not None:
        stamp(path, provenance)


def stamp(path, provenance: dict) -> None:
    """Write the ``<file>.prov.json`` sidecar of an artifact (tables, figures, claims.md)."""
    write_json(sidecar(path), provenance)


def read_table(path) -> pd.DataFrame:
    """Read a CSV/parquet table; ValueError naming the file when it is missing or malformed."""
    path = Path(path)
    try:
        return pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path)
    except FileNotFoundError:
        raise ValueError(f"table {path} does not exist; run the rule that makes it") from None
    except Exception as exc:
        raise ValueError(f"table {path} is malformed: {exc}".splitlines()[0]) from None
