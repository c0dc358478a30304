"""benchmarks/measure_tolerances.py: a column's tolerance is ten times its largest measured
deviation, and bounds.csv's R_* columns share one pattern rule that verify applies to an R_*
column added later."""

import subprocess
import sys
from pathlib import Path

import pandas as pd

from entropic_bound.verify import compare_frames, load_tolerances

REPO = Path(__file__).resolve().parents[2]

BOUNDS = pd.DataFrame(
    {
        "task_id": ["L3_r1_s0", "L3_r2_s0"],
        "R_bound": [0.5, 0.25],
        "R_other": [0.5, 0.125],
        "grad_norm": [1e-3, 2e-3],
        "iterations": [10, 20],
    }
)


def _run(folder: Path, bounds: pd.DataFrame) -> Path:
    (folder / "tables").mkdir(parents=True)
    bounds.to_csv(folder / "tables" / "bounds.csv", index=False)
    return folder


def test_r_columns_share_one_rule_of_their_largest_deviation(tmp_path):
    ref = _run(tmp_path / "ref", BOUNDS)
    moved = BOUNDS.copy()
    moved.loc[0, "R_bound"] = 0.5 * (1 + 1e-6)  # rel 1e-6
    moved.loc[1, "R_other"] = 0.125 * (1 + 3e-6)  # rel 3e-6: the largest of the R_*
    moved.loc[1, "grad_norm"] = 2e-3 * (1 + 1e-2)
    out = tmp_path / "tol.yaml"
    r = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "measure_tolerances.py"), str(ref)]
        + [str(_run(tmp_path / "other", moved)), "--out", str(out)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    text = out.read_text()
    assert '"R_*": {rtol: 3.0e-05, atol: 0.0e+00}' in text, text
    assert "R_bound:" not in text and "R_other:" not in text
    assert "grad_norm: {rtol: 1.0e-01" in text and "iterations: exact" in text
    tols = load_tolerances(out)
    assert tols.rule("bounds.csv", "R_new_route").rtol == 3.0e-05  # a column added later
    later = BOUNDS.assign(R_new_route=[0.5, 0.5])
    run = later.copy()
    run.loc[0, "R_new_route"] = 0.5 * (1 + 6e-5)  # twice the pattern's tolerance
    res = compare_frames("bounds.csv", later, run, tols)
    assert res.status == "OUT OF TOLERANCE" and res.worst.column == "R_new_route"
    assert res.unruled == []
