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
from entropic_bound.core.io import sidecar, write_json, write_text

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


#: where a run keeps every config an artifact's hash names (results/<run>/configs/<hash>.yaml)
CONFIGS_DIR = "configs"


def stored_config_path(cfg: dict, root=".") -> Path:
    return Path(root) / "results" / cfg["run_name"] / CONFIGS_DIR / f"{config_hash(cfg)}.yaml"


def store_config(cfg: dict, root=".") -> Path:
    """Keep the config a job's stamps will name: ``results/<run>/configs/<hash>.yaml`` under
    ``root`` (the workflow's working directory), written once, atomically. Every job does this
    as it starts (workflow/scripts/eb_entry.py), so that an artifact left from an earlier
    config (an edit reruns only the jobs that read the edited section) still resolves to the
    config that made it, which provenance.json alone (the current config) does not hold."""
    import yaml

    path = stored_config_path(cfg, root)
    if not path.exists():
        write_text(path, yaml.safe_dump(cfg, sort_keys=True, allow_unicode=True))
    return path


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
        # each config hash an artifact names -> its stored config (None: not stored, a run
        # made before results/<run>/configs existed)
        "configs": _stored_configs(Path(out_path).parent, items.values()),
    }
    write_json(out_path, summary)
    return summary


def _stored_configs(run_dir: Path, entries) -> dict:
    hashes = sorted({e["config_hash"] for e in entries if "config_hash" in e})
    out = {}
    for h in hashes:
        path = run_dir / CONFIGS_DIR / f"{h}.yaml"
        out[h] = f"{CONFIGS_DIR}/{h}.yaml" if path.is_file() else None
    return out


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
