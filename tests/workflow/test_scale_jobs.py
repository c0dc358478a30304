"""The verdict-by-scale study as jobs of this workflow (dry runs and parses, no job runs).

Each scale's run is the Snakefile as a module with that scale's config, its rules imported as
scale_d<d>_<rule> (workflow/rules/scale.smk), so a profile schedules its jobs like any other:
`snakemake -n scale` must plan, for every d, exactly the jobs `snakemake -n reproduce-all
--configfile <its config>` plans, and no rule may start a Snakemake of its own. The study here is
tests/cluster/scale/scales.yaml (d = 4 and the quick config at d = 8), which `make test-cluster`
runs through profiles/slurm.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_profiles import is_cluster_job, load_workflow, resource_value

REPO = Path(__file__).resolve().parents[2]
SMK = str(Path(sys.executable).with_name("snakemake"))
SCALE_LIST = REPO / "tests" / "cluster" / "scale" / "scales.yaml"
#: d -> the config the list names
SCALES = {4: REPO / "tests" / "cluster" / "scale" / "d4.yaml", 8: REPO / "config" / "quick.yaml"}


def dry_run(workdir: Path, *args) -> str:
    """`snakemake -n` from an empty working directory, its output."""
    cmd = [SMK, "-n", *args, "-s", str(REPO / "Snakefile"), "-d", str(workdir)]
    r = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return r.stdout + r.stderr


def jobs(out: str) -> list[tuple[str, str, str]]:
    """(rule, output, wildcards) of every job a dry run plans."""
    found = []
    for block in re.split(r"^\s*(?=(?:local)?rule [\w-]+:$)", out, flags=re.M):
        m = re.match(r"(?:local)?rule ([\w-]+):$", block, re.M)
        if m:
            fields = dict(re.findall(r"^\s+(output|wildcards): (.*)$", block, re.M))
            found.append((m.group(1), fields.get("output", ""), fields.get("wildcards", "")))
    return sorted(found)


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> list[tuple[str, str, str]]:
    """The jobs of `snakemake -n scale` with the test list, the paper config the outer one."""
    return jobs(
        dry_run(tmp_path_factory.mktemp("study"), "scale", "--config", f"scale_list={SCALE_LIST}")
    )


def test_each_scales_jobs_are_its_runs_jobs_in_the_study(study, tmp_path_factory):
    """Every job of `snakemake -n reproduce-all --configfile <config>` (the run alone, as a user
    makes it) is a job of the study, under its rule's scale_d<d>_ name, writing the same file
    with the same wildcards; the study adds the table and its target, nothing else."""
    seen = set()
    for d, config in SCALES.items():
        alone = jobs(
            dry_run(tmp_path_factory.mktemp(f"d{d}"), "reproduce-all", "--configfile", str(config))
        )
        alone = [j for j in alone if j[0] != "reproduce-all"]  # a target with no output
        prefix = f"scale_d{d}_"
        ours = [(r.removeprefix(prefix), o, w) for r, o, w in study if r.startswith(prefix)]
        assert ours == alone, d
        assert {"tasks", "train", "claims"} <= {r for r, _, _ in ours}
        seen |= {r for r, _, _ in study if r.startswith(prefix)}
    assert {r for r, _, _ in study} - seen == {"scale_table", "scale"}


def test_no_rule_starts_a_snakemake_of_its_own(study, with_scales):
    """The study's jobs are the outer DAG's: no rule (of the workflow or a scale's module) runs
    a nested `snakemake`, which under a cluster profile would run every job of its run on the
    node that runs it."""
    names = {r.name for r in with_scales.rules}
    assert {"scale_d4_train", "scale_d8_train", "scale_table"} <= names and "scale_run" not in names
    for rule in with_scales.rules:
        assert "snakemake" not in (rule.shellcmd or ""), rule.name
    assert not any("scale_run" in r for r, _, _ in study)


@pytest.fixture(scope="module")
def with_scales():
    """The parsed workflow of the study, the paper config the outer one (as in `study`)."""
    return load_workflow("config.yaml", scale_list=str(SCALE_LIST))


def test_a_scales_rules_are_its_runs_rules(with_scales):
    """Each imported rule is the rule of the run alone: a cluster job exactly when the run's own
    rule is one, its files under that run's results/<run_name>/, its config digest (params.reads:
    what reruns it) and its resources those of its own config, not of the outer one."""
    for d, config in SCALES.items():
        wf = load_workflow(str(config))
        alone = {r.name: r for r in wf.rules}
        run = f"{wf.globals['RUN']}/"
        prefix = f"scale_d{d}_"
        ours = {
            r.name.removeprefix(prefix): r for r in with_scales.rules if r.name.startswith(prefix)
        }
        assert set(ours) == set(alone) - set(with_scales.globals["NOT_RUN_RULES"])
        for name, rule in ours.items():
            assert is_cluster_job(with_scales, rule) == is_cluster_job(wf, alone[name]), name
            for f in [*rule.output, *rule.log]:
                assert str(f).startswith(run), (rule.name, f)
            if "reads" in rule.params.keys():
                assert rule.params.reads == alone[name].params.reads, rule.name
            for key in ("mem_mb", "runtime", "_cores"):
                if key in rule.resources:
                    value = resource_value(rule.resources[key])
                    assert value == resource_value(alone[name].resources[key]), (rule.name, key)
    # each module reads its own config: the two runs' training digests differ
    trains = ("train", "scale_d4_train", "scale_d8_train")
    reads = {r.name: r.params.reads for r in with_scales.rules if r.name in trains}
    assert reads["scale_d4_train"] != reads["scale_d8_train"] != reads["train"]


def test_a_run_that_is_not_the_study_declares_no_scale():
    """A run that is not the study parses no scale: the list is neither read nor its runs
    declared (each would cost a parse of the workflow)."""
    wf = load_workflow()
    assert not any(r.name.startswith("scale_d") for r in wf.rules)
    assert wf.globals["SCALES"] == {}


def test_the_scale_that_is_the_outer_run_is_built_by_the_workflows_own_rules():
    """Started with the config a scale lists (the quick config, d = 8), the study builds that
    run with the workflow's own rules: a module would be a second rule for each of its files."""
    wf = load_workflow(scale_list=str(SCALE_LIST))  # the quick config
    assert wf.globals["SCALES"][8]["own"] and not wf.globals["SCALES"][4]["own"]
    assert not any(r.name.startswith("scale_d8_") for r in wf.rules)
    assert any(r.name == "scale_d4_train" for r in wf.rules)
