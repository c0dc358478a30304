"""Facts the documentation states about the repository, derived from their source and compared:
config/README.md's paper defaults (from config/config.yaml, defaults filled as the pipeline
fills them), docs/cluster.md's jobs per rule (from `snakemake -n`), benchmarks/registered/'s index
(from its folders)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from entropic_bound.config.load import load_config

REPO = Path(__file__).resolve().parents[2]
SMK = str(Path(sys.executable).with_name("snakemake"))


def markdown_table(text: str, first_header: str) -> list[list[str]]:
    """The rows (cells stripped) of the first Markdown table whose header starts with
    ``| first_header |``."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {first_header} |"))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]])
    return rows


def _get(cfg: dict, dotted: str):
    for part in dotted.split("."):
        cfg = cfg[part]
    return cfg


# ---------------------------------------------------------------- config/README.md


def _value(text: str):
    """A documented value as YAML reads it, and `1e-3` as the number it is (YAML 1.1 reads a
    float without a dot as text)."""
    value = yaml.safe_load(text)
    try:
        return float(value) if isinstance(value, str) else value
    except ValueError:
        return value


def paper_defaults_in_readme() -> dict[str, object]:
    """key -> the value config/README.md's "paper default" column gives it."""
    out = {}
    text = (REPO / "config" / "README.md").read_text()
    for key_cell, default_cell, _ in markdown_table(text, "key"):
        keys = re.findall(r"`([\w.]+)`", key_cell)
        values = re.findall(r"`([^`]*)`", default_cell)
        if not values:  # "see below"
            continue
        assert len(keys) == len(values), f"{key_cell}: {len(keys)} keys, {len(values)} defaults"
        out.update({k: _value(v) for k, v in zip(keys, values)})
    return out


def test_config_readme_paper_defaults_are_config_yamls():
    documented = paper_defaults_in_readme()
    assert len(documented) > 30 and "task.seeds" in documented
    cfg = load_config(REPO / "config" / "config.yaml")
    wrong = {k: (v, _get(cfg, k)) for k, v in documented.items() if v != _get(cfg, k)}
    assert not wrong, f"config/README.md (documented, config.yaml): {wrong}"


#: the optimiser keys of config/README.md's paragraph: "`lr` (Adam learning rate, 2e-2)"
OPTIM_KEYS = (
    "lr batch max_steps eval_every patience min_delta lr_decay lr_drops converge_at chunk restarts"
)


def test_config_readme_optimiser_defaults_are_config_yamls():
    text = (REPO / "config" / "README.md").read_text()
    cfg = load_config(REPO / "config" / "config.yaml")["train"]["classes"]["default"]
    wrong = {}
    for key in OPTIM_KEYS.split():
        m = re.search(rf"`{key}`\s*(?:\(|=)\s*[^)]*?(-?\d+(?:\.\d+)?(?:e-?\d+)?)", text)
        assert m, f"config/README.md does not state `{key}`'s default"
        if float(m.group(1)) != cfg[key]:
            wrong[key] = (m.group(1), cfg[key])
    assert not wrong, f"config/README.md's optimiser keys (documented, config.yaml): {wrong}"


def test_a_drifted_default_is_caught(tmp_path):
    row = "| `task.seeds`, `task.n` | `[0, 1]`, `16` | why |"
    text = f"| key | paper default | why |\n|---|---|---|\n{row}\n\nafter\n"
    rows = markdown_table(text, "key")
    assert rows == [["`task.seeds`, `task.n`", "`[0, 1]`, `16`", "why"]]
    cfg = load_config(REPO / "config" / "config.yaml")
    assert yaml.safe_load("[0, 1]") != _get(cfg, "task.seeds")


# ---------------------------------------------------------------- docs/cluster.md

CONFIGS = ("config", "large", "large_d64_n128")


def job_stats(configfile: Path, workdir: Path) -> dict[str, int]:
    """Jobs per rule of `snakemake -n reproduce-all` from an empty working directory."""
    r = subprocess.run(
        [SMK, "-n", "reproduce-all", "-s", str(REPO / "Snakefile"), "-d", str(workdir)]
        + ["--configfile", str(configfile)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=workdir,
    )
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    out = r.stdout + r.stderr
    table = out[out.index("Job stats:") :].split("\n\n")[0]
    counts = dict(re.findall(r"^([\w-]+)\s+(\d+)$", table, re.M))
    counts.pop("total")
    return {rule: int(n) for rule, n in counts.items()}


def local_rules() -> set[str]:
    """Rules declared ``localrule: True`` in the Snakefile and workflow/rules/."""
    local = set()
    for path in [REPO / "Snakefile", *sorted((REPO / "workflow" / "rules").glob("*.smk"))]:
        for block in re.split(r"^(?=rule |checkpoint )", path.read_text(), flags=re.M):
            m = re.match(r"(?:rule|checkpoint) ([\w-]+):", block)
            if m and re.search(r"^\s+localrule:\s*True", block, re.M):
                local.add(m.group(1))
    return local


@pytest.fixture(scope="module")
def stats(tmp_path_factory):
    return {
        c: job_stats(REPO / "config" / f"{c}.yaml", tmp_path_factory.mktemp(c)) for c in CONFIGS
    }


def cluster_md() -> str:
    return (REPO / "docs" / "cluster.md").read_text()


def test_cluster_md_jobs_per_rule_are_the_dry_runs(stats):
    documented = {}
    for cells in markdown_table(cluster_md(), "rule"):
        rules = re.findall(r"`([\w-]+)`", cells[0].split("(")[0])
        counts = [int(n) for n in re.findall(r"\d+", cells[1])]
        counts = counts * len(CONFIGS) if len(counts) == 1 else counts
        assert len(counts) == len(CONFIGS), cells
        for rule in rules:
            documented[rule] = dict(zip(CONFIGS, counts))
    local = local_rules() | {"reproduce-all"}
    planned = {
        rule: {c: stats[c].get(rule, 0) for c in CONFIGS}
        for rule in set().union(*stats.values()) - local
    }
    assert documented == planned, (
        f"docs/cluster.md (documented, snakemake -n): {documented} {planned}"
    )


def test_cluster_md_lists_the_local_rules_and_the_jobs_submitted(stats):
    text = cluster_md()
    sentence = re.search(r"The cheap rules \(([^)]*)\) are `localrule`s", text, re.S)
    assert sentence, "docs/cluster.md no longer lists the local rules"
    listed = set(re.findall(r"`([\w-]+)`", sentence.group(1)))
    ran = set().union(*stats.values())
    assert listed == (local_rules() & ran) - {"reproduce-all"}
    local = local_rules() | {"reproduce-all"}
    submitted = {c: sum(n for r, n in stats[c].items() if r not in local) for c in CONFIGS}
    m = re.search(
        r"A paper run submits (\d+) jobs, `config/large.yaml` (\d+), `large_d64_n128` (\d+)", text
    )
    assert m, "docs/cluster.md no longer says how many jobs a run submits"
    assert dict(zip(CONFIGS, map(int, m.groups()))) == submitted


def test_cluster_md_says_how_many_jobs_the_scale_study_submits(tmp_path):
    """The default scale list's study from an empty working directory: its jobs (each scale's
    run as a module, `scale_d<d>_<rule>`) less the local ones, as docs/cluster.md counts them."""
    r = subprocess.run(
        [SMK, "-n", "scale", "-s", str(REPO / "Snakefile"), "-d", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    rules = re.findall(r"^\s*(?:local)?rule ([\w-]+):$", r.stdout, re.M)
    local = local_rules() | {"reproduce-all"}
    submitted = [rule for rule in rules if re.sub(r"^scale_d\d+_", "", rule) not in local]
    assert len(rules) > len(submitted) > 100
    m = re.search(r"the default list's study submits (\d+) jobs", cluster_md())
    assert m, "docs/cluster.md no longer says how many jobs the scale study submits"
    assert int(m.group(1)) == len(submitted)


# ---------------------------------------------------------------- benchmarks/registered/


def test_registered_index_lists_exactly_the_folders():
    root = REPO / "benchmarks" / "registered"
    folders = {p.name for p in root.iterdir() if p.is_dir()}
    rows = markdown_table((root / "README.md").read_text(), "folder")
    listed = [re.match(r"\[([\w-]+)\]\(([\w-]+)/RUN\.md\)", cells[0]) for cells in rows]
    assert all(listed), [cells[0] for cells in rows]
    assert all(m.group(1) == m.group(2) for m in listed)
    names = [m.group(1) for m in listed]
    assert len(names) == len(set(names)) and set(names) == folders


def test_readme_results_table_is_the_reference_runs():
    """The README's results table is headline_lines of the shipped reference's claims.csv and
    subclaims.csv (rewrite it with `python benchmarks/readme_headline.py`)."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    from readme_headline import with_headline

    readme = (REPO / "README.md").read_text()
    assert readme == with_headline(readme), "run python benchmarks/readme_headline.py"
