"""benchmarks/profile_stage.py's parts that need no run: a dry run's first output of a rule, the
job's name, and the table (shares of the summed self time, the rest in one row)."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location(
    "profile_stage", ROOT / "benchmarks" / "profile_stage.py"
)
profile_stage = importlib.util.module_from_spec(spec)
spec.loader.exec_module(profile_stage)

DRY_RUN = """
[Sun Dec  6 05:22:05 2026]
rule tasks:
    output: results/large/tasks/L0_r1_s0.npz, results/large/tasks/L0_r2_s0.npz
    log: results/large/logs/tasks/L0.log
    jobid: 2

[Sun Dec  6 05:22:05 2026]
rule predict_part:
    input: results/large/tasks/L0_r1_s0.npz
    output: results/large/predict_parts/r1_s0.parquet
    jobid: 7

[Sun Dec  6 05:22:05 2026]
localrule predict:
    input: results/large/predict_parts/r1_s0.parquet
    output: results/large/tables/data_only_predictions.csv, results/large/predict/spectra.parquet
"""


def test_the_first_output_of_a_rules_job():
    first = profile_stage.first_output
    assert first(DRY_RUN, "tasks") == "results/large/tasks/L0_r1_s0.npz"
    assert first(DRY_RUN, "predict_part") == "results/large/predict_parts/r1_s0.parquet"
    assert first(DRY_RUN, "predict") == "results/large/tables/data_only_predictions.csv"  # local
    assert first(DRY_RUN, "train") is None


def test_a_jobs_name_is_its_output_path_under_results():
    name = profile_stage.job_name
    assert (
        name("results/paper/train/L1/sweep_c0.metrics.parquet") == "paper_train_L1_sweep_c0.metrics"
    )
    assert name("results/paper/bounds/L0+Lam0.25.csv") == "paper_bounds_L0+Lam0.25"


def test_the_table_gives_shares_of_the_summed_self_time_and_the_rest_in_one_row():
    rows = [
        {"function": "a | b", "self_s": 3.0, "cum_s": 4.0, "calls": 2},
        {"function": "c", "self_s": 0.5, "cum_s": 0.5, "calls": 1},
        {"function": "d", "self_s": 0.5, "cum_s": 0.5, "calls": 9},
    ]
    lines = profile_stage.table({"cpu_s": 99.0, "rows": rows}, top=1)
    assert lines[2] == "| `a \\| b` | 3.00 | 75.0 % | 2 | 4.00 |"
    assert lines[3] == "| (the other 2) | 1.00 | 25.0 % | | |"
