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

#: the paper this workflow reproduces (provenance.json, the report)
PAPER = "arXiv 2607.23050"
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


#: what provenance.json copies from each artifact's sidecar
STAMP_KEYS = ("config_hash", "git_commit", "rule", "figure", "rung", "kind", "chunk", "partial")


def summarize_provenance(cfg: dict, artifacts, out_path) -> dict:
    """results/<run_name>/provenance.json: the run's stamp and every artifact's sha256 and stamp.

    An artifact without a ``.prov.json`` sidecar is a ValueError naming it: every artifact the
    workflow publishes is stamped by the job that wrote it.
    """
    import hashlib

    items = {}
    for p in map(Path, artifacts):
        side = sidecar(p)
        if not side.exists():
            raise ValueError(
                f"{p} has no provenance sidecar {side.name}; rerun the rule that makes it"
            )
        stamp_ = json.loads(side.read_text())
        entry = {"sha256": hashlib.sha256(p.read_bytes()).hexdigest(), "bytes": p.stat().st_size}
        entry.update({k: stamp_[k] for k in STAMP_KEYS if k in stamp_})
        items[str(p)] = entry
    summary = {
        "paper": PAPER,
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


def provenance_rst(summary: dict) -> str:
    """The report's metadata (paper, run, config hash, commit, versions) as an rst field list;
    workflow/report/workflow.rst includes it."""
    packages = ", ".join(f"{k} {v}" for k, v in sorted(summary["packages"].items()))
    fields = [
        ("Paper", summary["paper"]),
        ("Run", f"``{summary['run_name']}``"),
        ("Config hash", f"``{summary['config_hash']}``"),
        ("Git commit", f"``{summary['git_commit']}``"),
        ("Base seed", summary["seed"]),
        ("Packages", packages),
        (
            "Artifacts",
            f"{len(summary['artifacts'])}, each with its sha256 and stamp in provenance.json",
        ),
    ]
    return "".join(f":{name}: {value}\n" for name, value in fields)
