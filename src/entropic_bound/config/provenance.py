"""The provenance stamp every artifact carries: config hash, git commit, package versions.

It lives above ``core`` (which only writes a stamp it is given, ``core.io``) because the stamp
needs the config's hash and the clone's root.
"""

from __future__ import annotations

import json
import platform
import subprocess
from importlib import metadata
from pathlib import Path

from entropic_bound.config.load import REPO, config_hash
from entropic_bound.core.io import sidecar, write_json

#: the paper this workflow reproduces (provenance.json, the report)
PAPER = "arXiv 2607.23050"
PACKAGES = ("torch", "numpy", "pandas", "matplotlib", "seaborn", "pyarrow", "snakemake")


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
