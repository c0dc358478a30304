# Shared helpers and input functions (no rules here).
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(workflow.basedir) / "src"))

from entropic_bound.pipeline import chunks_of_rung  # noqa: E402
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


def train_task_files(wildcards):
    """Task files of one training job: chunk `chunk` of the rung's tasks."""
    chunk = chunks_of_rung(config, wildcards.rung)[int(wildcards.chunk)]
    return [task_file(t) for t in chunk]


def train_outputs(table):
    """Every training job's `table` (metrics, dynamics or loss)."""
    return [
        f"{RUN}/train/{rung}/{kind}_c{c}.{table}.parquet"
        for rung in RUNGS
        for kind in ("sweep", "static")
        for c in range(len(chunks_of_rung(config, rung)))
    ]


def get_final_output():
    return [*get_artifacts(), f"{RUN}/provenance.json"]


def get_artifacts():
    """Every table and figure the pipeline publishes."""
    return [
        f"{RUN}/tables/data_only_predictions.csv",
        f"{RUN}/tables/frontier.csv",
        f"{RUN}/tables/train_metrics.parquet",
        *ANALYSIS_OUTPUTS,  # claims, figures, T2-T4: workflow/rules/analysis.smk
    ]


def write_partial_claims():
    """onerror: a claims table from the jobs that finished (failed inputs: missing input)."""
    from entropic_bound.claims import claims_text
    from entropic_bound.pipeline import claims_after_failure

    try:
        table = claims_after_failure(config, CLAIMS, RUN)
    except Exception as exc:  # never mask the failure that brought us here
        print(f"entropic-bound: no partial claims table ({exc})", file=sys.stderr)
        return
    print(claims_text(table), file=sys.stderr)
    print(
        f"entropic-bound: some jobs failed; partial claims in {RUN}/claims.md",
        file=sys.stderr,
    )


# --- cluster resources ---
# What a rule asks a cluster for (profiles/slurm/config.yaml turns it into sbatch options).
# mem_mb and runtime (minutes) grow with the attempt: `retries: 1` in the profile resubmits a
# job that SLURM killed for memory or time, and a retry with the same request would fail again.


def by_attempt(base):
    """A resource that is ``base`` on the first attempt and ``k * base`` on the k-th."""

    def resource(wildcards, attempt):
        return base * attempt

    return resource


def train_gpus():
    """GPUs per training job: one when the config says `device: cuda` (sbatch --gpus), else 0."""
    return 1 if config["device"] == "cuda" else 0
