"""Profile one job of a stage of a config, and write where its time went as a short table.

    python benchmarks/profile_stage.py --configfile config/config.yaml --rule predict_part
    python benchmarks/profile_stage.py --configfile config/large.yaml --rule best_bounds \\
        --target results/large/best_bounds/L1.csv --profiler torch

Three steps, from the clone's root (the run's results/<run_name>/ as the workflow writes them):
(1) the job's output: ``--target``, else the first output of ``--rule`` in a dry run of the
whole run (``snakemake -n --forceall``); (2) its inputs, by ``snakemake <target> --omit-from
<rule>`` (every job before it, as the run makes them; none when they exist); (3) the job itself,
forced, with ``EB_PROFILE`` set (src/entropic_bound/core/profiling.py): its ``main`` runs under
cProfile (functions: a ``@`` inside a function counts as that function's own time) or torch's
profiler (``--profiler torch``: torch's operators). The table (function, self seconds, share of
the job's CPU time, calls, cumulative seconds) goes to
benchmarks/results/profile_<run>_<the job's output path>.md with the CPU, threads and commit, and to stdout.
Run it nice'd with one thread on a shared machine (the job's own ``threads`` are the config's).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SMK = str(Path(sys.executable).with_name("snakemake"))
OUT = REPO / "benchmarks" / "results"


def snakemake(args: list[str], env=None) -> str:
    """Run snakemake from the clone's root; its output, or exit with its last lines."""
    cmd = [SMK, *args, "--cores", "1"]
    r = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        tail = (r.stdout + r.stderr).strip().splitlines()[-15:]
        sys.exit(f"profile_stage: {' '.join(cmd)} failed:\n" + "\n".join(tail))
    return r.stdout + r.stderr


def first_output(dry_run: str, rule: str) -> str | None:
    """The first output of a job of ``rule`` in a dry run's text (``snakemake -n``)."""
    job = re.search(
        rf"^(?:local)?rule {re.escape(rule)}:\n((?:[ \t]+.*\n)+)", dry_run, re.MULTILINE
    )
    if not job:
        return None
    out = re.search(r"^\s+output: (.*)$", job.group(1), re.MULTILINE)
    return out.group(1).split(", ")[0] if out else None


def job_name(target: str) -> str:
    """``<run>_<path under the run>`` of a job's output, its suffix dropped and folders joined by
    ``_`` (results/paper/train/L1/sweep_c0.metrics.parquet: paper_train_L1_sweep_c0.metrics)."""
    parts = Path(target).parts
    parts = parts[1:] if parts[0] == "results" else parts
    return re.sub(r"\.(csv|parquet|npz|json)$", "", "_".join(parts))


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform

    return platform.processor() or "unknown"


def commit() -> str:
    r = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    return r.stdout.strip() or "unknown"


def table(profile: dict, top: int) -> list[str]:
    """Markdown rows of the ``top`` functions by self time, each with its share of the total."""
    total = sum(r["self_s"] for r in profile["rows"]) or 1.0
    lines = ["| function | self s | share | calls | cumulative s |", "|---|---|---|---|---|"]
    shown = profile["rows"][:top]
    for r in shown:
        name = r["function"].replace("|", "\\|")
        lines.append(
            f"| `{name}` | {r['self_s']:.2f} | {100 * r['self_s'] / total:.1f} % "
            f"| {r['calls']} | {r['cum_s']:.2f} |"
        )
    rest = sum(r["self_s"] for r in profile["rows"][top:])
    lines.append(
        f"| (the other {len(profile['rows']) - len(shown)}) | {rest:.2f} | {100 * rest / total:.1f} % | | |"
    )
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--configfile", required=True, help="the run's config (e.g. config/config.yaml)"
    )
    ap.add_argument(
        "--rule", required=True, help="the stage's rule: predict_part, bounds, train, ..."
    )
    ap.add_argument("--target", help="the job's output (default: the rule's first job)")
    ap.add_argument("--profiler", choices=("cprofile", "torch"), default="cprofile")
    ap.add_argument("--top", type=int, default=20, help="rows of the table")
    ap.add_argument("--out", type=Path, help="the table's file (default: benchmarks/results/...)")
    args = ap.parse_args()
    config = ["--configfile", args.configfile]
    target = args.target
    if target is None:
        target = first_output(snakemake(["-n", "--forceall", *config]), args.rule)
        if target is None:
            sys.exit(f"profile_stage: the run has no job of rule {args.rule!r}")
    snakemake([target, "--omit-from", args.rule, *config])
    with tempfile.TemporaryDirectory() as tmp:
        stats = Path(tmp) / "profile.json"
        env = {**os.environ, "EB_PROFILE": str(stats), "EB_PROFILE_RULE": args.rule}
        env["EB_PROFILER"] = args.profiler
        snakemake([target, "--forcerun", args.rule, *config], env=env)
        if not stats.exists():
            sys.exit(f"profile_stage: no job of {args.rule!r} ran for {target}")
        profile = json.loads(stats.read_text())
    out = args.out or OUT / f"profile_{job_name(target)}.md"
    text = [
        f"# Profile: rule `{args.rule}`, job `{target}`",
        "",
        f"`python benchmarks/profile_stage.py --configfile {args.configfile} --rule {args.rule}"
        f" --target {target} --profiler {args.profiler}`; commit {commit()}; CPU {cpu_model()};"
        f" torch threads as the config's (`threads`); {profile['profiler']}: the job's wall"
        f" {profile['wall_s']:.1f} s, CPU {profile['cpu_s']:.1f} s. Self seconds are CPU seconds"
        " (cProfile's clock is the process's CPU time) or, under torch's profiler, its operators'"
        " time; shares are of their sum. Under cProfile a tensor product written inside a"
        " function (`@`) is that function's self time.",
        "",
        *table(profile, args.top),
        "",
    ]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(text))
    print("\n".join(text))
    print(f"profile_stage: wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
