"""The Snakemake profiles and the resources every rule declares (fast: no daemons, no jobs).

The real SLURM run is tests/cluster/run_cluster_test.sh (`make test-cluster`); this checks what
can go wrong before a job is ever submitted: the profile parses through Snakemake's own command
line, every option and resource in it is one Snakemake or the SLURM plugin knows, every rule it
names exists, and every rule that becomes a cluster job says how much memory and time it needs
(and a GPU for training exactly when the config says `device: cuda`).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
PROFILES = {"slurm": REPO / "profiles" / "slurm", "local": REPO / "profiles" / "local"}
ENV_KEYS = ("SBATCH_ACCOUNT", "SBATCH_PARTITION", "SBATCH_GPU_PARTITION")
#: resource names that mean something to Snakemake or to the SLURM plugin (sbatch options)
KNOWN_RESOURCES = {
    "_cores",
    "_nodes",
    "tmpdir",
    "mem_mb",
    "mem_mib",
    "mem",
    "disk_mb",
    "disk_mib",
    "disk",
    "runtime",
    "cpus_per_task",
    "cpus_per_gpu",
    "gpu",
    "gpu_model",
    "slurm_partition",
    "slurm_account",
    "slurm_extra",
    "constraint",
    "qos",
    "nodes",
    "tasks",
}


@pytest.fixture
def env(monkeypatch):
    """Set the profile's environment variables (None: unset); restores them afterwards."""

    def set_env(**values):
        for key in ENV_KEYS:
            monkeypatch.delenv(key, raising=False)
        for key, value in values.items():
            monkeypatch.setenv(key, value)

    set_env()
    return set_env


def profile_args(name: str):
    """The profile as `snakemake --profile profiles/<name>` reads it (argparse namespace)."""
    from snakemake.cli import get_argument_parser

    return get_argument_parser(profiles=[str(PROFILES[name])]).parse_args([])


def profile_keys(name: str) -> dict:
    """Top-level options of the profile, YTE templating resolved with the current environment."""
    from snakemake.profiles import ProfileConfigFileParser

    with open(PROFILES[name] / "config.yaml") as f:
        return dict(ProfileConfigFileParser().parse(f))


def load_workflow(configfile="quick.yaml", **config):
    """The parsed workflow of a config with `config` overrides (no DAG, no jobs)."""
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import (
        ConfigSettings,
        OutputSettings,
        Quietness,
        ResourceSettings,
        StorageSettings,
    )

    cwd = os.getcwd()
    try:
        with SnakemakeApi(OutputSettings(quiet={Quietness.ALL})) as api:
            wf = api.workflow(
                snakefile=REPO / "Snakefile",
                workdir=REPO,
                config_settings=ConfigSettings(
                    configfiles=[REPO / "config" / configfile], config=config
                ),
                resource_settings=ResourceSettings(),
                storage_settings=StorageSettings(),
            )
            return wf._workflow
    finally:
        os.chdir(cwd)


@pytest.fixture(scope="module")
def workflow_cpu():
    return load_workflow(device="cpu")


def is_cluster_job(workflow, rule) -> bool:
    """Would a job of this rule be submitted (not run by Snakemake itself) under a cluster executor?"""
    return rule.group is not None or not (rule.name in workflow._localrules or rule.norun)


def resource_value(resource, attempt: int = 1):
    """A rule's resource evaluated as the scheduler would for its first job."""
    evaluated = resource.evaluate(wildcards={}, attempt=attempt, input=[], threads=1)
    return evaluated.value


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_profile_is_a_mapping_of_known_options(name, env):
    from snakemake.cli import get_argument_parser

    known = set(get_argument_parser()._option_string_actions)
    raw = yaml.safe_load((PROFILES[name] / "config.yaml").read_text())
    assert isinstance(raw, dict)
    env(**{k: "x" for k in ENV_KEYS})  # every conditional key present
    for key in profile_keys(name):
        assert f"--{key}" in known, (
            f"profiles/{name}: --{key} is no option of snakemake or its plugins"
        )
    profile_args(name)  # types and values accepted by Snakemake's own parser


def test_slurm_profile_settings(env):
    args = profile_args("slurm")
    assert args.executor == "slurm"
    assert args.jobs >= 10 and args.latency_wait >= 10 and args.retries >= 1
    assert args.slurm_keep_successful_logs
    defaults = args.default_resources
    for key in ("runtime", "mem_mb", "cpus_per_task"):
        assert key in defaults, f"default-resources lacks {key}"
    # account and partition come from sbatch's own variables; unset, the plugin's defaults apply
    assert "slurm_account" not in defaults and "slurm_partition" not in defaults
    assert not args.set_resources


def test_slurm_profile_reads_account_and_partitions_from_the_environment(env):
    env(SBATCH_ACCOUNT="proj42", SBATCH_PARTITION="cpu", SBATCH_GPU_PARTITION="gpu")
    keys = profile_keys("slurm")
    defaults = dict(item.split("=", 1) for item in keys["default-resources"])
    assert defaults["slurm_account"] == "proj42"
    assert defaults["slurm_partition"] == "cpu"
    assert "train:slurm_partition=gpu" in keys["set-resources"]


def test_profile_names_only_rules_that_exist(env, workflow_cpu):
    env(SBATCH_GPU_PARTITION="gpu")
    rules = {r.name for r in workflow_cpu.rules}
    args = profile_args("slurm")
    for rule in args.set_resources:
        assert rule in rules, f"set-resources names rule {rule}, which does not exist"
    for rule in array_rules():
        assert rule in rules, f"slurm-array-jobs names rule {rule}, which does not exist"


def array_rules() -> list[str]:
    """The rules the SLURM profile submits as job arrays (`slurm-array-jobs`)."""
    value = profile_keys("slurm").get("slurm-array-jobs") or ""
    return [r.strip() for r in str(value).split(",") if r.strip()]


def test_no_job_arrays_that_can_deadlock(env):
    """Plugin 2.8.0 never submits an array rule whose ready jobs were only partly handed over
    (a `jobs:` limit below the rule's job count, or jobs that become ready in waves, like
    training after a retried `tasks` job), and keeps their slots: the run hangs (snakemake/snakemake-executor-plugin-slurm#473)."""
    assert array_rules() == [], f"slurm-array-jobs: {array_rules()} can deadlock"


@pytest.mark.parametrize("cap", ["25", "1"])
def test_retries_never_ask_for_more_than_the_maximum_runtime(monkeypatch, cap):
    monkeypatch.setenv("EB_MAX_RUNTIME_MIN", cap)
    rules = {r.name: r for r in load_workflow(device="cpu").rules}
    for name in ("tasks", "predict_part", "frontier", "train"):
        runtime = rules[name].resources["runtime"]
        for attempt in (1, 2, 3):
            assert resource_value(runtime, attempt=attempt) <= int(cap), (name, attempt)
    assert resource_value(rules["frontier"].resources["runtime"], attempt=1) == min(20, int(cap))


def test_default_maximum_runtime_is_a_day(monkeypatch):
    monkeypatch.delenv("EB_MAX_RUNTIME_MIN", raising=False)
    frontier = next(r for r in load_workflow(device="cpu").rules if r.name == "frontier")
    assert resource_value(frontier.resources["runtime"], attempt=100) == 1440


@pytest.mark.parametrize("bad", ["abc", "0", "-5", "1.5", ""])
def test_a_bad_maximum_runtime_is_rejected_naming_the_variable(monkeypatch, capsys, bad):
    monkeypatch.setenv("EB_MAX_RUNTIME_MIN", bad)
    with pytest.raises(SystemExit) as exit_:
        load_workflow(device="cpu")
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("entropic-bound: error: EB_MAX_RUNTIME_MIN=")


def test_every_cluster_rule_declares_memory_and_time(workflow_cpu):
    missing = []
    for rule in workflow_cpu.rules:
        declared = set(rule.resources)
        unknown = declared - KNOWN_RESOURCES
        assert not unknown, (
            f"rule {rule.name}: resources {sorted(unknown)} mean nothing to the SLURM plugin"
        )
        if not is_cluster_job(workflow_cpu, rule):
            continue
        for key in ("mem_mb", "runtime"):
            if key not in declared:
                missing.append(f"{rule.name}.{key}")
                continue
            value = resource_value(rule.resources[key])
            assert isinstance(value, int) and value > 0, f"rule {rule.name}: {key} = {value!r}"
    assert not missing, (
        f"cluster rules without their own resources (add them to the rule, "
        f"or mark a cheap rule `localrule: True`): {', '.join(missing)}"
    )


def test_retries_ask_for_more(workflow_cpu):
    for rule in workflow_cpu.rules:
        if rule.name in ("tasks", "predict_part", "frontier"):
            for key in ("mem_mb", "runtime"):
                first = resource_value(rule.resources[key], attempt=1)
                assert resource_value(rule.resources[key], attempt=2) == 2 * first


def test_training_asks_for_a_gpu_exactly_when_the_config_says_cuda(workflow_cpu):
    def gpus(workflow):
        train = next(r for r in workflow.rules if r.name == "train")
        assert "gpu" in train.resources, "rule train: add `gpu=train_gpus()` to its resources"
        return resource_value(train.resources["gpu"])

    assert gpus(workflow_cpu) == 0
    assert gpus(load_workflow(device="cuda")) == 1
    for rule in workflow_cpu.rules:  # nothing else holds a GPU
        if rule.name != "train" and "gpu" in rule.resources:
            assert resource_value(rule.resources["gpu"]) == 0, rule.name


@pytest.mark.parametrize(
    "name, d, n",
    [("large.yaml", 64, 64), ("large_d64_n128.yaml", 64, 128), ("large_d128_n128.yaml", 128, 128)],
)
def test_large_configs_are_the_science_scale_and_get_bigger_jobs(name, d, n, workflow_cpu):
    from entropic_bound.config.load import load_config

    cfg = load_config(REPO / "config" / name)
    assert (cfg["task"]["d"], cfg["task"]["n"], max(cfg["task"]["r_star"])) == (d, n, 32)
    assert cfg["task"]["n_train"] >= n * d  # P_static needs n*d sequences
    # runs on a CPU too (ae153f1, 2026-12-03); cuda when one is visible
    assert cfg["device"] == "auto"
    large = {r.name: r for r in load_workflow(name).rules}
    small = {r.name: r for r in workflow_cpu.rules}
    for rule, key in [("tasks", "mem_mb"), ("predict_part", "mem_mb"), ("predict_part", "runtime")]:
        big, quick = (resource_value(w[rule].resources[key]) for w in (large, small))
        assert big >= quick, f"{name}: {rule}.{key} = {big} < quick's {quick}"


@pytest.mark.parametrize("per_job", [1, 3])  # 8, every rung in one job: the quick run
def test_bounds_jobs_group_the_rungs_in_order(per_job):
    """rungs_per_job: the rungs in their order, in groups of at most that many, each
    group one job named by its rungs (a single rung keeps its own name, the files of before);
    every rung's training reads its group's table."""
    wf = load_workflow(rungs_per_job=per_job)
    rungs, groups, group_of = (wf.globals[k] for k in ("RUNGS", "BOUNDS_GROUPS", "BOUNDS_GROUP_OF"))
    assert [r for g in groups.values() for r in g] == rungs
    assert all(1 <= len(g) <= per_job for g in groups.values())
    assert len(groups) == -(-len(rungs) // per_job)
    assert all(name == "+".join(g) for name, g in groups.items())
    assert {r: group_of[r] for r in rungs} == {r: n for n, g in groups.items() for r in g}
    tasks = next(r for r in wf.rules if r.name == "tasks")
    if per_job == 1:  # one tasks job per rung too; with every rung in one group, one in all
        assert list(groups) == rungs and "rung" in tasks.wildcard_names


@pytest.mark.parametrize("per_job", [1, 8])
def test_predict_jobs_are_one_or_one_per_random_stream(per_job):
    """The predict jobs: one for every task when one bounds group holds every rung (the quick
    and paper runs), else one per (r*, seed), whose tasks share X; every task in one job."""
    wf = load_workflow(rungs_per_job=per_job)
    parts, tasks = wf.globals["PREDICT_PARTS"], wf.globals["TASKS"]
    assert sorted(t.task_id for p in parts.values() for t in p) == sorted(t.task_id for t in tasks)
    if per_job == 8:
        assert list(parts) == ["all"] and parts["all"] == tasks
    else:
        assert len(parts) == len({(t.r_star, t.seed) for t in tasks})
        for name, specs in parts.items():
            assert {f"r{t.r_star}_s{t.seed}" for t in specs} == {name}
            assert len(specs) == len(wf.globals["RUNGS"])


def test_no_quick_job_asks_for_more_time_than_the_test_clusters_partition(workflow_cpu):
    """tests/cluster/slurm.conf.in's partition has MaxTime=60: a quick-config job asking for more
    is never started (PartitionTimeLimit) and `make test-cluster` waits for it until its timeout
    (a bounds job of 6 grouped rungs once asked for 180 min)."""
    limit = int(
        re.search(r"MaxTime=(\d+)", (REPO / "tests/cluster/slurm.conf.in").read_text()).group(1)
    )
    for rule in workflow_cpu.rules:
        if is_cluster_job(workflow_cpu, rule) and "runtime" in rule.resources:
            minutes = resource_value(rule.resources["runtime"])
            assert minutes <= limit, f"rule {rule.name}: runtime {minutes} > MaxTime {limit}"
