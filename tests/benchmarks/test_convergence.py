"""benchmarks/convergence.py reads each task's ε_task from the run's bounds table."""

import subprocess
import sys
from pathlib import Path

import pandas as pd
from fabricate import fabricate

REPO = Path(__file__).resolve().parents[2]


def _run(tmp_path, bounds: pd.DataFrame | None):
    tables = tmp_path / "tables"
    tables.mkdir(parents=True, exist_ok=True)
    metrics = fabricate(task_seeds=(0,))["train_metrics"]
    metrics.to_parquet(tables / "train_metrics.parquet", index=False)
    if bounds is not None:
        bounds.to_csv(tables / "bounds.csv", index=False)
    return subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "convergence.py"), str(tmp_path)],
        capture_output=True,
        text=True,
    )


def test_a_student_above_its_epsilon_task_fails_the_check(tmp_path):
    """The fabricated students reach R = 3e-4 at r*: below ε = 1e-3 (exit 0), above an
    ε_task of 1e-4 (a bound of 2e-4 at r* − 1; exit 1)."""
    ok = _run(tmp_path / "a", None)
    assert ok.returncode == 0 and "no bounds.csv" in ok.stdout, ok.stderr
    metrics = fabricate(task_seeds=(0,))["train_metrics"]
    tasks = metrics.drop_duplicates("task_id")
    tight = pd.DataFrame(
        {"task_id": tasks["task_id"], "rank": tasks["r_star"] - 1, "R_bound": 2e-4}
    )
    bad = _run(tmp_path / "b", tight)
    assert bad.returncode == 1 and "ε_task per task" in bad.stdout, bad.stdout + bad.stderr
