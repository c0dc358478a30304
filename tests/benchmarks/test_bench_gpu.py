"""The GPU benchmark and the knee comparison, run here on the CPU (``--device cpu``): time on a GPU
comes in minutes, so the script run there is tested where there is none."""

import importlib.util
import json
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[2]


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _last_json(capsys) -> dict:
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def test_bench_gpu_on_cpu_and_compare_knees(tmp_path, capsys):
    metrics = tmp_path / "gpu_metrics.csv"
    _load("bench_gpu").main(
        ["--device", "cpu", "--config", "config/quick.yaml", "--max-jobs", "2"]
        + ["--gpu-chunk", "4", "--gpu-deadline", "0", "--cpu-budget", "0"]
        + ["--metrics-out", str(metrics)]
    )
    line = _last_json(capsys)
    # the deadline stops the stage after its first job; no CPU jobs, so no ratio
    assert (line["training_jobs"], line["gpu_jobs_done"], line["gpu_chunk"]) == (2, 1, 4)
    assert line["jobs_on_both"] == 0 and line["cpu_over_gpu"] is None
    students = pd.read_csv(metrics)
    assert len(students) == line["students"] > 0

    # against itself as the "CPU run": every knee and every R the same
    run = tmp_path / "run"
    (run / "train" / "L0").mkdir(parents=True)
    cpu = students.copy()
    cpu.to_parquet(run / "train" / "L0" / "sweep_c0.metrics.parquet")
    compare = _load("compare_knees").main
    compare([str(metrics), str(run), "--config", "config/quick.yaml"])
    same = _last_json(capsys)
    assert same["tasks"] > 0 and same["knees_equal"] == same["tasks"]
    assert same["knees_differ"] == {} and same["max_abs_log10_R_ratio"] == 0.0
    assert same["same_side_of_epsilon"] == f"{len(students)}/{len(students)}"

    # a fabricated CPU run whose students of one task never reach ε: that knee differs
    task = students.task_id.iloc[0]
    cpu.loc[cpu.task_id == task, "R"] = 1.0
    cpu.to_parquet(run / "train" / "L0" / "sweep_c0.metrics.parquet")
    compare([str(metrics), str(run), "--config", "config/quick.yaml"])
    differ = _last_json(capsys)
    assert list(differ["knees_differ"]) == [task] and differ["knees_differ"][task][1] is None
    assert differ["knees_equal"] == same["tasks"] - 1
