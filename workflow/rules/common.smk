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
# What a job asks a cluster for (profiles/slurm/config.yaml turns it into sbatch options),
# derived from the config so that the large configs get what they need and the paper config
# what it always had. Estimates are upper bounds: float64 data for the data-only stages, every
# student running to max_steps, 5 GFLOP/s per CPU thread and 2 TFLOP/s on a GPU (both well
# below what the kernels reach). mem_mb and runtime (minutes) grow with the attempt: `retries: 1`
# in the profile resubmits a job that SLURM killed for memory or time, and the same request
# would fail again.
from math import ceil  # noqa: E402

_T = config["task"]
#: one float64 [n_train, n, d] array in MB, the unit the data-only stages' memory grows with
DATA_MB = _T["n_train"] * _T["n"] * _T["d"] * 8 / 2**20


def by_attempt(base):
    """A resource that is ``base`` on the first attempt and ``k * base`` on the k-th."""

    def resource(wildcards, attempt):
        return ceil(base) * attempt

    return resource


def tasks_mem_mb():
    """make_task: X, noise and Y of the training split in float64, plus the attention [B, n, n]."""
    attention_mb = _T["n_train"] * _T["n"] ** 2 * 8 / 2**20
    return max(2000, 1000 + 8 * DATA_MB + 2 * attention_mb)


def predict_mem_mb():
    """P_static: X, Y and a noisy copy in float64, and the normal equations of vec(X), [nd, nd]."""
    normal_mb = (_T["n"] * _T["d"]) ** 2 * 8 / 2**20
    return max(4000, 1000 + 12 * DATA_MB + 5 * normal_mb)


def predict_runtime():
    """P_static dominates: 4 B (nd)^2 + 2 n^2 d^4 + 10 d^6 flops per task and noise level."""
    n, d, B = _T["n"], _T["d"], _T["n_train"]
    flops = 4 * B * (n * d) ** 2 + 2 * n**2 * d**4 + 10 * d**6
    fits = len(TASKS) * (1 + len(config["predict"]["noisy_sigmas"]))
    return 20 + flops * fits / (5e9 * config["threads"]) / 60


def train_mem_mb():
    """A training job holds its tasks' float32 arrays twice (loaded, stacked), plus torch/CUDA."""
    task_mb = (_T["n_train"] + _T["n_test"]) * _T["n"] * _T["d"] * 4 * 2 / 2**20
    return max(4000, 3000 + 2 * config["train"]["tasks_per_job"] * task_mb)


def train_runtime():
    """Minutes for one training job if every student ran max_steps (most stop far earlier)."""
    n, d, train = _T["n"], _T["d"], config["train"]
    optims = [{**train["classes"]["default"], **c} for c in train["classes"].values()]
    samples = max(o["batch"] * o["max_steps"] for o in optims)  # per student
    students = train["tasks_per_job"] * max(n, d) * len(train["student_seeds"])
    flops = 6 * (2 * n * d * d + 2 * n * n * d) * samples * students
    rate = 2e12 if config["device"] == "cuda" else 5e9 * config["threads"]
    return 30 + flops / rate / 60


def train_gpus():
    """GPUs per training job: one when the config says `device: cuda` (sbatch --gpus), else 0."""
    return 1 if config["device"] == "cuda" else 0


# Verdict by scale (workflow/rules/scale.smk): config/scale/scales.yaml maps d to a config.
from entropic_bound.scale import load_scales  # noqa: E402

SCALE_LIST = config.get("scale_list", "config/scale/scales.yaml")
SCALES = {s["d"]: s for s in load_scales(SCALE_LIST)}
SCALE_DIR = "results/scale"


def scale_config(wildcards):
    return SCALES[int(wildcards.d)]["config"]


def scale_run_dir(wildcards):
    cfg = yaml.safe_load(Path(scale_config(wildcards)).read_text())
    return f"results/{cfg['run_name']}"
