# Shared helpers and input functions (no rules here).
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(workflow.basedir) / "src"))

from entropic_bound.tasks import task_specs  # noqa: E402

CLAIMS = yaml.safe_load(Path("config/claims.yaml").read_text())
validate(CLAIMS, schema="../schemas/claims.schema.yaml")

RUN = f"results/{config['run_name']}"
TASKS = task_specs(config)
RUNGS = sorted({t.rung for t in TASKS}, key=[t.rung for t in TASKS].index)


def task_file(task):
    return f"{RUN}/tasks/{task.task_id}.npz"


def tasks_of_rung(wildcards):
    return [task_file(t) for t in TASKS if t.rung == wildcards.rung]


def rung_task_outputs(rung):
    return [task_file(t) for t in TASKS if t.rung == rung]


def all_task_files():
    return [task_file(t) for t in TASKS]


def get_final_output():
    return [
        f"{RUN}/tables/data_only_predictions.csv",
        f"{RUN}/tables/frontier.csv",
    ]
