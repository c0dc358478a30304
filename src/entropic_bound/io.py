"""Atomic writes and provenance stamps.

Every writer goes through a temporary file in the destination directory and an
``os.replace``, so an interrupted job never leaves a file that looks finished.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import subprocess
import tempfile
from importlib import metadata
from pathlib import Path

import numpy as np
import pandas as pd

from .config import REPO, config_hash

PACKAGES = ("torch", "numpy", "pandas", "matplotlib", "seaborn", "pyarrow", "snakemake")


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
        write_json(sidecar(path), provenance)


def sidecar(path) -> Path:
    path = Path(path)
    return path.with_name(path.name + ".prov.json")


def write_json(path, obj) -> None:
    with atomic_path(path, ".json") as tmp:
        tmp.write_text(json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n")


def write_text(path, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text)


def read_table(path) -> pd.DataFrame:
    """Read a CSV/parquet table; ValueError naming the file when it is missing or malformed."""
    path = Path(path)
    try:
        return pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path)
    except FileNotFoundError:
        raise ValueError(f"table {path} does not exist; run the rule that makes it") from None
    except Exception as exc:
        raise ValueError(f"table {path} is malformed: {exc}".splitlines()[0]) from None


def git_commit() -> str:
    try:
        out = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
        )
        dirty = subprocess.run(
            ["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
        return (
            out.stdout.strip() + ("-dirty" if dirty else "") if out.returncode == 0 else "unknown"
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def package_versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for p in PACKAGES:
        try:
            out[p] = metadata.version(p)
        except metadata.PackageNotFoundError:
            out[p] = "absent"
    return out


def provenance(cfg: dict, **extra) -> dict:
    """The stamp every artifact carries: config hash, git commit, package versions, seeds."""
    return {
        "config_hash": config_hash(cfg),
        "run_name": cfg.get("run_name"),
        "git_commit": git_commit(),
        "packages": package_versions(),
        "seed": cfg.get("seed"),
        **extra,
    }


def summarize_provenance(cfg: dict, artifacts, out_path) -> dict:
    """results/<run_name>/provenance.json: the run's stamp and every artifact's sha256 and stamp."""
    import hashlib

    items = {}
    for p in map(Path, artifacts):
        entry = {"sha256": hashlib.sha256(p.read_bytes()).hexdigest(), "bytes": p.stat().st_size}
        side = sidecar(p)
        if side.exists():
            stamp = json.loads(side.read_text())
            entry.update({k: stamp.get(k) for k in ("config_hash", "git_commit", "rule")})
        items[str(p)] = entry
    summary = {
        **provenance(cfg),
        "config": cfg,
        "seeds": {
            "base": cfg["seed"],
            "task_seeds": cfg["task"]["seeds"],
            "student_seeds": cfg["train"]["student_seeds"],
            "frontier_seeds": cfg["frontier"]["seeds"],
        },
        "artifacts": items,
    }
    write_json(out_path, summary)
    return summary
