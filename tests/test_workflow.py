"""The quick pipeline end to end: every artifact, figure regeneration, resume, determinism.

One full run of config/quick.yaml (run_name pytest_a) is shared by the tests below; a second
run (pytest_b) is interrupted by SIGINT once training has started, a third (pytest_c) has a
training job SIGKILLed, and both are resumed: every table must equal run A's, value for value.
"""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[1]
SMK = str(Path(sys.executable).with_name("snakemake"))
QUICK = ["--configfile", "config/quick.yaml"]


def smk(*args, run_name, check=True, timeout=600):
    # --config takes every following word: targets and flags go first
    cmd = [SMK, *args, "--cores", "2", *QUICK, "--config", f"run_name={run_name}"]
    r = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=timeout)
    if check and r.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
    return r


def fresh(run_name):
    subprocess.run(["rm", "-rf", str(REPO / "results" / run_name)], check=True)


@pytest.fixture(scope="module")
def run_a():
    fresh("pytest_a")
    r = smk("reproduce-all", run_name="pytest_a")
    smk("reproduce-all", "--report", "results/pytest_a/report.html", run_name="pytest_a")
    return REPO / "results" / "pytest_a", r


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
    assert list(claims.claim) == [f"C{i}" for i in range(1, 10)]
    assert set(claims.verdict) <= {"reproduced", "not reproduced", "missing input"}
    assert set(claims.columns) >= {"claim", "statement", "measured", "threshold", "verdict"}
    for i in range(1, 8):
        assert len(list((run_dir / "figures").glob(f"F{i}_*.png"))) == 1, f"F{i} png"
        assert len(list((run_dir / "figures").glob(f"F{i}_*.pdf"))) == 1, f"F{i} pdf"
    for t in ("T2", "T3", "T4"):
        assert len(list((run_dir / "tables").glob(f"{t}_*.csv"))) == 1, t
    assert (run_dir / "claims.md").stat().st_size > 0
    assert (run_dir / "report.html").stat().st_size > 10_000
    assert (run_dir / "provenance.json").exists()


def test_reproduce_all_prints_the_claims_table(run_a):
    _, r = run_a
    assert "C9" in r.stdout + r.stderr


def test_figures_regenerate_from_cache(run_a):
    script = REPO / "src" / "entropic_bound" / "plotting.py"
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


def _interrupt(run_name, kill_training: bool):
    fresh(run_name)
    cmd = [SMK, "reproduce-all", "--cores", "2", *QUICK, "--config", f"run_name={run_name}"]
    proc = subprocess.Popen(
        cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    logs = REPO / "results" / run_name / "logs" / "train"
    deadline = time.time() + 300
    while time.time() < deadline and proc.poll() is None:
        if logs.exists() and any(logs.iterdir()):
            time.sleep(2)
            break
        time.sleep(0.5)
    if kill_training:
        # only this run's training jobs: they live in the session the run was started in
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
    return REPO / "results" / run_name


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
    r = subprocess.run(
        [SMK, "--cores", "2", "--configfile", str(path), "--keep-going", "reproduce-all"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    out = r.stdout + r.stderr
    assert r.returncode != 0
    assert "diverged" in out and "L4_sweep_c0.log" in out
    run_dir = REPO / "results" / "pytest_fail"
    # everything that does not depend on the failed job is still produced ...
    for f in (
        "tables/frontier.csv",
        "tables/data_only_predictions.csv",
        "tables/T4_frontier.csv",
        "figures/F6_frontier.png",
        "train/L0/sweep_c0.metrics.parquet",
    ):
        assert (run_dir / f).exists(), f
    # ... and the claims that need it say so instead of passing
    claims = pd.read_csv(run_dir / "tables" / "claims.csv").set_index("claim")
    assert claims.loc["C8", "verdict"] == "missing input"
    assert claims.loc["C7", "verdict"] in ("missing input", "not reproduced")
    assert claims.loc["C1", "verdict"] != "missing input"  # L0 trained fine
    assert "Partial run" in (run_dir / "claims.md").read_text()
