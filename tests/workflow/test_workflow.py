"""The quick pipeline end to end: every artifact, figure regeneration, resume, determinism.

Most runs here go to a working directory outside the clone (`snakemake -s <clone>/Snakefile
-d <tmp>`, started from that directory), as on a cluster's scratch filesystem. One full run of
config/quick.yaml (run_name pytest_a) is shared by the tests below; a second run (pytest_int)
is interrupted by SIGINT once training has started, a third (pytest_kill) has a training job
SIGKILLed, and both are resumed: every table must equal run A's, value for value. One more
(pytest_clone) runs the README's commands as written, from the clone's root with its relative
paths and the report, into results/pytest_clone/ (removed afterwards; a user's runs have other
names).
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[2]
SMK = str(Path(sys.executable).with_name("snakemake"))
QUICK = ["--configfile", str(REPO / "config" / "quick.yaml")]
#: the working directory of every run: outside the clone (see the module docstring); two
#: checkouts testing at once on one machine give each its own with ENTROPIC_BOUND_TEST_WORKDIR
WORK = Path(
    os.environ.get("ENTROPIC_BOUND_TEST_WORKDIR")
    or Path(tempfile.gettempdir()) / f"entropic-bound-test-workdir-{os.getuid()}"
)
WHERE = ["-s", str(REPO / "Snakefile"), "-d", str(WORK)]


def smk(*args, run_name, check=True, timeout=1800, configfile=None, overrides=()):
    # --config takes every following word: targets and flags go first
    config = ["--configfile", str(configfile)] if configfile else QUICK
    cmd = [SMK, *args, *WHERE, "--cores", "2", *config, "--config", f"run_name={run_name}"]
    cmd += overrides
    r = subprocess.run(cmd, cwd=WORK, capture_output=True, text=True, timeout=timeout)
    if check and r.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
    return r


def fresh(run_name):
    WORK.mkdir(exist_ok=True)
    subprocess.run(["rm", "-rf", str(WORK / "results" / run_name)], check=True)


@pytest.fixture(scope="module")
def run_a():
    assert not WORK.resolve().is_relative_to(REPO)
    fresh("pytest_a")
    r = smk("reproduce-all", run_name="pytest_a")
    run_dir = WORK / "results" / "pytest_a"
    smk("reproduce-all", "--report", str(run_dir / "report.html"), run_name="pytest_a")
    return run_dir, r


#: the run made from the clone's root: a name no user run has, removed when the tests end
CLONE_RUN = "pytest_clone"


@pytest.fixture(scope="module")
def run_in_clone():
    """`snakemake reproduce-all`, then the same with `--report`, from the clone's root as the
    README writes them (relative config path, no -s, no -d); seconds for each."""
    run_dir = REPO / "results" / CLONE_RUN
    shutil.rmtree(run_dir, ignore_errors=True)
    seconds = []
    try:
        for extra in ([], ["--report", f"results/{CLONE_RUN}/report.html"]):
            cmd = [SMK, "reproduce-all", *extra, "--cores", "2", "--configfile"]
            cmd += ["config/quick.yaml", "--config", f"run_name={CLONE_RUN}"]
            start = time.monotonic()
            r = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=1800)
            seconds.append(time.monotonic() - start)
            assert r.returncode == 0, f"{' '.join(cmd)}:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
        yield run_dir, seconds
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)


def tables(run_dir: Path) -> dict[str, pd.DataFrame]:
    out = {}
    for p in sorted((run_dir / "tables").iterdir()):
        if p.suffix == ".csv":
            out[p.name] = pd.read_csv(p)
        elif p.suffix == ".parquet":
            out[p.name] = pd.read_parquet(p)
    return out


def assert_same_tables(a: Path, b: Path):
    ta, tb = tables(a), tables(b)
    assert ta.keys() == tb.keys()
    for name in ta:
        pd.testing.assert_frame_equal(ta[name], tb[name], check_exact=True, obj=name)


def test_every_artifact(run_a):
    run_dir, _ = run_a
    claims = pd.read_csv(run_dir / "tables" / "claims.csv")
    assert list(claims.claim) == [f"C{i}" for i in range(1, 10)] * 4  # v1, v2, v3, then v4
    assert list(claims.registration) == ["v1"] * 9 + ["v2"] * 9 + ["v3"] * 9 + ["v4"] * 9
    sub = pd.read_csv(run_dir / "tables" / "subclaims.csv", comment="#")
    assert set(sub.claim) == set(claims.claim) and sub.subclaim.is_unique  # v4 line by line
    controls = pd.read_csv(run_dir / "tables" / "controls.csv")
    v3 = controls[(controls.registration == "v3") & (controls.role != "validation")]
    assert v3.true_passes.all() and v3.false_fails.all()  # every v3 check shown able to fail
    assert "## Controls" in (run_dir / "claims.md").read_text()
    assert set(claims.verdict) <= {
        "reproduced",
        "not reproduced",
        "missing input",
        "insufficient data",
        "ill-posed on this grid",
        "no power",
        "validated",
    }
    assert set(claims.columns) >= {"claim", "statement", "measured", "threshold", "verdict"}
    assert (run_dir / "tables" / "bounds.csv").exists()
    for i in range(1, 8):
        assert len(list((run_dir / "figures").glob(f"F{i}_*.png"))) == 1, f"F{i} png"
        assert len(list((run_dir / "figures").glob(f"F{i}_*.pdf"))) == 1, f"F{i} pdf"
    for t in ("T2", "T3", "T4"):
        assert len(list((run_dir / "tables").glob(f"{t}_*.csv"))) == 1, t
    assert (run_dir / "claims.md").stat().st_size > 0
    assert (run_dir / "report.html").stat().st_size > 10_000
    assert (run_dir / "provenance.json").exists()
    assert not (REPO / "results" / "pytest_a").exists()  # nothing written into the clone


def test_the_readmes_commands_from_the_clones_root(run_a, run_in_clone):
    """The report is written where the README says, with the claims, the task files are kept,
    and the tables are those of the run outside the clone, value for value (the working
    directory changes no number)."""
    run_dir, seconds = run_in_clone
    print(f"from the clone's root: run {seconds[0]:.0f} s, report {seconds[1]:.0f} s")
    html = (run_dir / "report.html").read_text()
    assert len(html) > 10_000 and "C9: the frontier" in html
    assert (run_dir / "tasks").is_dir()  # kept: an edit of train reruns training only
    assert_same_tables(run_a[0], run_dir)


def test_provenance_covers_every_artifact(run_a):
    """Every table, per-job training table, the predict spectra, figure and claims.md is in
    provenance.json with the stamp of the job that wrote it, and has a `.prov.json` sidecar
    (docs/reproducibility.md: Provenance)."""
    run_dir, _ = run_a
    prov = json.loads((run_dir / "provenance.json").read_text())
    assert prov["paper"] == "arXiv 2607.23050"
    written = {
        str(p.relative_to(WORK))
        for sub in ("tables", "figures", "train", "predict")
        for p in (run_dir / sub).rglob("*")
        if p.is_file() and not p.name.endswith(".prov.json")
    } | {str((run_dir / "claims.md").relative_to(WORK))}
    assert set(prov["artifacts"]) == written
    # 6 rungs x 2 kinds x 3 tables, the exploratory full-rank L4 job by beta (one table), and
    # each rung's students' factors (the best bounds' starts)
    assert len([p for p in written if "/train/" in p]) == 43
    for path, entry in prov["artifacts"].items():
        assert (WORK / (path + ".prov.json")).exists(), path
        for key in ("config_hash", "git_commit", "rule", "sha256"):
            assert entry.get(key), f"{path}: {key} = {entry.get(key)!r}"
        assert entry["config_hash"] == prov["config_hash"], path
        assert entry["rule"] != "onerror", path
    assert prov["artifacts"]["results/pytest_a/figures/F6_frontier.png"]["figure"] == "F6"
    assert prov["artifacts"]["results/pytest_a/train/L0/sweep_c0.metrics.parquet"]["rung"] == "L0"


def test_report_has_metadata_and_claims_first(run_a):
    run_dir, _ = run_a
    prov = json.loads((run_dir / "provenance.json").read_text())
    html = (run_dir / "report.html").read_text()
    for text in ("2607.23050", prov["config_hash"], prov["git_commit"], "Config hash"):
        assert text in html, text
    assert "1 Claims and provenance" in html and "C9: the frontier" in html
    assert '"Other": ' not in html  # every item has its category and subcategory


def test_every_artifacts_config_hash_resolves_to_a_stored_config(run_a):
    """results/<run>/configs/<hash>.yaml for every hash a stamp names (each job stores its own
    config as it starts), and that file hashes to its name."""
    import yaml

    from entropic_bound.config.load import config_hash

    run_dir, _ = run_a
    prov = json.loads((run_dir / "provenance.json").read_text())
    hashes = {a["config_hash"] for a in prov["artifacts"].values()}
    assert hashes and set(prov["configs"]) == hashes
    for h, rel in prov["configs"].items():
        assert rel == f"configs/{h}.yaml", (h, rel)
        assert config_hash(yaml.safe_load((run_dir / rel).read_text())) == h


def test_training_logs_show_progress(run_a):
    run_dir, _ = run_a
    logs = sorted((run_dir / "logs" / "train").glob("*.log"))
    # 6 jobs of the grid (each trains its chunk's sweep, then its static students), the
    # exploratory one by beta and C8 under distortion
    assert len(logs) == 8
    others = ("frontier", "boundaries", "c8_by_beta")  # boundaries: ~50 s at paper scale
    predict = sorted((run_dir / "logs" / "predict").glob("*.log"))  # the predict_part jobs
    assert predict
    for log in [*logs, *predict, *(run_dir / "logs" / f"{name}.log" for name in others)]:
        lines = [ln for ln in log.read_text().splitlines() if ln.startswith("[progress]")]
        assert lines and "(100%)" in lines[-1] and "ETA 0:00" in lines[-1], log.name


def test_a_later_successful_run_drops_the_partial_claims(run_a):
    """onerror's partial claims (fabricated here, as after a failed plotting job) live in
    partial/; the next successful run removes them and never touches claims.md/claims.csv."""
    from entropic_bound.claims.stage import claims_after_failure
    from entropic_bound.config.load import load_config

    run_dir, _ = run_a
    cfg = {**load_config(REPO / "config" / "quick.yaml"), "run_name": "pytest_a"}
    claims = load_config(REPO / "config" / "claims.yaml", schema="claims")
    before = {p: (run_dir / p).read_bytes() for p in ("claims.md", "tables/claims.csv")}
    claims_after_failure(cfg, claims, run_dir)
    assert "Partial run" in (run_dir / "partial" / "claims.md").read_text()
    assert before == {p: (run_dir / p).read_bytes() for p in before}
    smk("reproduce-all", run_name="pytest_a")
    assert not (run_dir / "partial").exists()
    assert "Partial run" not in (run_dir / "claims.md").read_text()


def test_reproduce_all_prints_the_claims_table(run_a):
    _, r = run_a
    assert "C9" in r.stdout + r.stderr


def test_figures_regenerate_from_cache(run_a):
    script = REPO / "src" / "entropic_bound" / "figures" / "f4_ladder.py"
    original = script.read_text()
    try:
        script.write_text(original + "\n# a change to a plotting script\n")
        r = smk("-n", "figures", run_name="pytest_a")
    finally:
        script.write_text(original)
    out = r.stdout + r.stderr
    assert "rule plot" in out or "rule figures" in out  # the plotting jobs are rescheduled ...
    for rule in ("rule tasks", "rule train", "rule collect_train", "rule predict", "rule frontier"):
        assert rule not in out, f"{rule} scheduled by a plotting change:\n{out}"


def planned(r) -> dict[str, int]:
    """Jobs per rule that a dry run (`snakemake -n`) would run (reproduce-all, which always
    runs, left out)."""
    rules = re.findall(r"^(?:local)?rule ([\w-]+):", r.stdout + r.stderr, re.M)
    return {rule: rules.count(rule) for rule in set(rules) - {"reproduce-all"}}


def edited_config(tmp_path, name, edit) -> Path:
    """config/quick.yaml with ``edit(cfg)`` applied, as a file."""
    import yaml

    cfg = yaml.safe_load((REPO / "config" / "quick.yaml").read_text())
    edit(cfg)
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


#: after any result table: the claims, the figures, provenance
_AFTER = {"claims", "plot_figures", "provenance"}
#: the training jobs and what reads their tables: the analyses, and the best-known bounds (the
#: students are a route, their factors a start), collected into tables/bounds.csv
_TRAIN = {"train", "collect_train", "analyses", "best_bounds", "collect_bounds"} | _AFTER
#: the data-only predictions and what reads them: the analyses, X3's ladder (floor_aware, its
#: figure in plot_frontier)
_PREDICT = {"predict_part", "predict", "analyses", "floor_aware", "plot_frontier"} | _AFTER
#: the class bounds (registration v2), which the training jobs read (ε_task)
_BOUNDS = {"bounds"} | _TRAIN
#: X3 (floor_aware) reads the frontier's grid at its own held-out seeds
_FRONTIER = {
    "frontier",
    "frontier_table",
    "boundaries",
    "c8_by_beta",
    "floor_aware",
    "plot_frontier",
} | _AFTER
#: the exploratory training job (C8 by beta) and its table
_BETA = {"train_beta", "c8_by_beta"} | _AFTER
#: C8 under distortion (registration v4's table): the seed, task, train and device sections
_DISTORTION = {"train_distortion"} | _AFTER
#: top-level section -> (edit, the rules `snakemake -n` must plan). Task files are kept (not
#: temp()), so a stage whose section changed reruns alone with what reads its outputs: no job
#: before it is made again (measured on the quick run, 2026-12-06)
PLANNED_BY_SECTION = {
    "threads": ({"threads": 2}, set()),  # in no digest: nothing
    "malloc_retain_mb": ({"malloc_retain_mb": 64}, set()),  # speed only, in no digest
    "seed": ({"seed": 1}, {"tasks"} | _BOUNDS | _PREDICT | _FRONTIER | _BETA | _DISTORTION),
    "device": ({"device": "auto"}, _TRAIN | _BETA | _DISTORTION),  # quick.yaml: cpu
    "task": ({"task": {"kappa": 2.5}}, {"tasks"} | _BOUNDS | _PREDICT | _BETA | _DISTORTION),
    "bounds": ({"bounds": {"n_seqs": 96}}, _BOUNDS),
    # the best-known bounds' settings are in no digest but best_bounds' (STAGE_OMITS in
    # workflow/rules/common.smk): v2's bounds and training stand
    "bounds.best": (
        {"bounds": {"best": {"n_random": 2}}},
        # no figure reads tables/bounds.csv
        {"best_bounds", "collect_bounds", "claims", "provenance"},
    ),
    "train": ({"train": {"checkpoints": 7}}, _TRAIN | _BETA | _DISTORTION),
    "train.classes.default.lr": (
        {"train": {"classes": {"default": {"lr": 2.0e-2}}}},
        _TRAIN | _BETA | _DISTORTION,
    ),
    "predict": ({"predict": {"clip": 1.0e-11}}, _PREDICT | _FRONTIER),
    "frontier": ({"frontier": {"kappa": 2.5}}, _FRONTIER),
    "exploratory": (
        {"exploratory": {"c8_beta": {"betas": [0.25, 2.0, 3.0]}}},
        {"train_beta", "boundaries", "c8_by_beta", "floor_aware", "plot_frontier"} | _AFTER,
    ),
}


def merge_into(cfg: dict, edit: dict) -> None:
    """``edit`` written over ``cfg`` key by key (nested mappings merged)."""
    for key, value in edit.items():
        if isinstance(value, dict) and isinstance(cfg.get(key), dict):
            merge_into(cfg[key], value)
        else:
            cfg[key] = value


@pytest.mark.parametrize("section", list(PLANNED_BY_SECTION))
def test_each_section_edit_plans_exactly_the_jobs_that_read_it(run_a, tmp_path, section):
    """One edit per section of the config, then `snakemake -n` on the finished quick run: the
    rules planned are those whose params.reads digest holds the section (STAGE_READS in
    workflow/rules/common.smk) and what depends on their outputs, nothing else: no task file is
    made again unless `task` or `seed` changed, so an edit of the optimiser reruns training and
    what follows, not the tasks, predictions or bounds before it."""
    edit, expected = PLANNED_BY_SECTION[section]
    path = edited_config(tmp_path, section, lambda cfg: merge_into(cfg, edit))
    assert planned(smk("-n", "reproduce-all", run_name="pytest_a")) == {}  # all up to date
    jobs = planned(smk("-n", "reproduce-all", run_name="pytest_a", configfile=path))
    assert set(jobs) == expected, (section, sorted(jobs))
    if "train" in expected:  # every training job, one per rung of the quick grid
        assert jobs["train"] == 6, jobs


def test_an_lr_edit_on_the_command_line_reruns_training_only(run_a):
    """The README's way (`--config 'train={...}'`): the same jobs as the file's edit."""
    lr = 'train={"classes":{"default":{"lr":2.0e-2}}}'
    jobs = planned(smk("-n", "reproduce-all", run_name="pytest_a", overrides=[lr]))
    assert set(jobs) == _TRAIN | _BETA | _DISTORTION and jobs["train"] == 6, jobs


def test_a_run_without_its_task_files_is_up_to_date_until_an_edit_needs_them(run_a):
    """A run made while task files were temp() has none (docs/reproducibility.md, "Disk"):
    nothing reruns; an lr edit makes the tasks again and reruns their readers once."""
    run_dir, _ = run_a
    tasks, aside = run_dir / "tasks", run_dir.parent / "pytest_a_tasks_aside"
    shutil.rmtree(aside, ignore_errors=True)
    tasks.rename(aside)
    try:
        assert planned(smk("-n", "reproduce-all", run_name="pytest_a")) == {}
        lr = 'train={"classes":{"default":{"lr":2.0e-2}}}'
        jobs = planned(smk("-n", "reproduce-all", run_name="pytest_a", overrides=[lr]))
        assert set(jobs) == {"tasks"} | _BOUNDS | _PREDICT | _BETA | _DISTORTION, sorted(jobs)
    finally:
        aside.rename(tasks)


def _interrupt(run_name, kill_training: bool):
    fresh(run_name)
    cmd = [SMK, "reproduce-all", *WHERE, "--cores", "2", *QUICK, "--config", f"run_name={run_name}"]
    proc = subprocess.Popen(
        cmd, cwd=WORK, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    logs = WORK / "results" / run_name / "logs" / "train"
    deadline = time.time() + 300
    while time.time() < deadline and proc.poll() is None:
        if logs.exists() and any(logs.iterdir()):
            time.sleep(2)
            break
        time.sleep(0.5)
    if kill_training:
        # only this run's training jobs: they live in the process session the run was started in
        subprocess.run(
            ["pkill", "-KILL", "-s", str(proc.pid), "-f", r"\.snakemake/scripts/.*train\.py"]
        )
        proc.wait(timeout=300)
    else:
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(timeout=300)
    # a killed run leaves a lock and possibly incomplete outputs: Snakemake must clean them up
    smk("--unlock", run_name=run_name)
    smk("reproduce-all", "--rerun-incomplete", run_name=run_name)
    return WORK / "results" / run_name


@pytest.mark.parametrize("kill_training", [False, True], ids=["sigint", "sigkill-train"])
def test_interrupted_run_resumes_to_identical_results(run_a, kill_training):
    run_dir, _ = run_a
    other = _interrupt("pytest_kill" if kill_training else "pytest_int", kill_training)
    assert_same_tables(run_dir, other)


def test_a_failing_training_job_fails_loudly_and_keep_going_marks_its_claims(tmp_path):
    import yaml

    cfg = yaml.safe_load((REPO / "config" / "quick.yaml").read_text())
    cfg["run_name"] = "pytest_fail"
    cfg["train"]["classes"]["L4"] = {"lr": 1e30}  # diverges at once: a NaN loss
    path = tmp_path / "failing.yaml"
    path.write_text(yaml.safe_dump(cfg))
    fresh("pytest_fail")
    r = smk("--keep-going", "reproduce-all", run_name="pytest_fail", check=False, configfile=path)
    out = r.stdout + r.stderr
    assert r.returncode != 0
    assert "diverged" in out and "L4_c0.log" in out
    run_dir = WORK / "results" / "pytest_fail"
    # everything that does not depend on the failed job is still produced ...
    for f in (
        "tables/frontier.csv",
        "tables/data_only_predictions.csv",
        "tables/T4_frontier.csv",
        "figures/F6_frontier.png",
        "train/L0/sweep_c0.metrics.parquet",
    ):
        assert (run_dir / f).exists(), f
    # ... and the claims that need it say so instead of passing, in partial/ only: rule claims
    # never ran, so its outputs do not exist (a later successful run writes them)
    claims = pd.read_csv(run_dir / "partial" / "claims.csv")
    claims = claims[claims["registration"] == "v1"].set_index("claim")
    assert claims.loc["C8", "verdict"] == "missing input"
    assert claims.loc["C7", "verdict"] in ("missing input", "not reproduced")
    assert claims.loc["C1", "verdict"] != "missing input"  # L0 trained fine
    assert "Partial run" in (run_dir / "partial" / "claims.md").read_text()
    assert "partial/claims.md" in out
    assert not (run_dir / "claims.md").exists() and not (run_dir / "tables" / "claims.csv").exists()
    stamp = json.loads((run_dir / "partial" / "claims.csv.prov.json").read_text())
    assert stamp["rule"] == "onerror" and stamp["partial"] is True


def test_as_a_module_of_another_workflow(tmp_path):
    """The workflow catalog's way: `module` + `use rule *`, from another directory (dry run)."""
    (tmp_path / "Snakefile").write_text(
        f'configfile: "{REPO / "config" / "quick.yaml"}"\n\n\n'
        f'module eb:\n    snakefile:\n        "{REPO / "Snakefile"}"\n'
        "    config:\n        config\n\n\nuse rule * from eb as eb_*\n"
    )
    r = subprocess.run(
        [SMK, "-n", "--cores", "1", "eb_reproduce-all"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-3000:]
    for rule in ("eb_tasks", "eb_train", "eb_claims", "eb_plot_figures", "eb_provenance"):
        assert rule in out, rule
    assert f"{REPO}/src/entropic_bound/figures/" in out or "rule eb_plot_figures" in out


def scale_list(tmp_path, d: int, config: Path) -> Path:
    """A scale list of one entry, as a file."""
    import yaml

    path = tmp_path / "scales.yaml"
    path.write_text(yaml.safe_dump({"scales": [{"d": d, "config": str(config)}]}))
    return path


def test_the_scale_study_reuses_a_run_that_exists(run_a, tmp_path):
    """A scale whose run exists, made by `snakemake reproduce-all` (run A), gets no job in the
    study: its module's jobs write the same files with the same params, so they are up to date
    and only the table is planned."""
    config = edited_config(tmp_path, "a", lambda cfg: cfg.update(run_name="pytest_a"))
    scales = scale_list(tmp_path, 8, config)
    r = smk("-n", "scale", run_name="pytest_scale_outer", overrides=[f"scale_list={scales}"])
    assert planned(r) == {"scale_table": 1, "scale": 1}, planned(r)


def test_a_failed_scale_study_writes_partial_claims_of_its_run_only(tmp_path):
    """A job of a scale's run fails: onerror writes the partial claims of that run (a scale's
    run is this workflow's, its claims too), never into the run of the config Snakemake was
    started with, which no job of the study touched."""
    config = edited_config(tmp_path, "inner", lambda cfg: cfg.update(run_name="pytest_scale_inner"))
    work = tmp_path / "work"
    inner = work / "results" / "pytest_scale_inner"
    inner.mkdir(parents=True)
    # the config is valid (a bad one is refused at the parse, before any job): every job of the
    # scale's run fails as it starts, where it stores its config (workflow/scripts/eb_entry.py)
    (inner / "configs").write_text("a file, not a directory\n")
    cmd = [SMK, "scale", "-s", str(REPO / "Snakefile"), "-d", str(work), "--cores", "1", *QUICK]
    cmd += ["--config", f"scale_list={scale_list(tmp_path, 8, config)}"]
    cmd += ["run_name=pytest_scale_outer"]
    r = subprocess.run(cmd, cwd=work, capture_output=True, text=True, timeout=600)
    out = r.stdout + r.stderr
    assert r.returncode != 0
    # failed for the planted reason, in a job of the scale's module, not another
    assert re.search(r"Error in rule scale_d8_\w+:", out), out[-3000:]
    logs = [p.read_text() for p in (inner / "logs").glob("*.log")]
    assert any("File exists: 'results/pytest_scale_inner/configs'" in t for t in logs), logs
    assert not (work / "results" / "pytest_scale_outer").exists()
    assert (inner / "partial" / "claims.md").exists()
    assert "partial claims in results/pytest_scale_inner/partial/claims.md" in r.stderr
