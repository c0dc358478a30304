# Shared helpers and input functions (no rules here): the config, paths, the stages' files, the
# final output; the report, cluster resources, the scale study and the heads runs in common/.
import os
import re
import sys
from pathlib import Path

# EB_ROOT (Snakefile): the clone, wherever Snakemake runs; its library comes first on the path
sys.path.insert(0, str(EB_ROOT / "src"))

from entropic_bound.config.load import ConfigError, check_workflow_config  # noqa: E402
from entropic_bound.config.load import config_hash  # noqa: E402

# the task grid without torch (tasks/grid.py): importing torch here cost every snakemake call ~2.5 s
from entropic_bound.tasks.grid import (
    chunks_of_rung,
    specs_by_stream,
    task_specs,
)  # noqa: E402
from entropic_bound.core.rungs import has_population  # noqa: E402


def config_or_exit(check, *args, **kwargs):
    """``check(*args, **kwargs)``; a ConfigError ends the parse: one line on stderr, exit 2."""
    try:
        return check(*args, **kwargs)
    except ConfigError as exc:
        print(f"entropic-bound: error: {exc}", file=sys.stderr)
        sys.exit(2)


#: whether this parse is one run of the scale study: this Snakefile as a module of itself,
#: named scale_d<d> (workflow/rules/scale.smk), its config the listed file that load_scale_list
#: has read and checked; the command line's config files and --config are the study's, not its
IS_SCALE_RUN = (
    re.fullmatch(r"scale_d\d+", workflow.modifier.namespace or "") is not None
)

# Before any rule: every config file strictly re-read, the merged config and the claims
# validated (src/entropic_bound/config/load.py). A bad config is one line on stderr and exit 2.
CLAIMS = config_or_exit(
    check_workflow_config,
    config,
    [] if IS_SCALE_RUN else workflow.configfiles,
    EB_ROOT / "config" / "claims.yaml",
    # --config values: Snakemake leaves nested ones text ('train={"classes": ...}')
    (
        None
        if IS_SCALE_RUN
        else getattr(
            getattr(workflow, "config_settings", None), "overwrite_config", None
        )
    ),
)


def repo_path(rel: str) -> str:
    """A file of the clone as an input: relative from the clone's root, else absolute."""
    path = EB_ROOT / rel
    return (
        os.path.relpath(path)
        if Path.cwd().resolve() == EB_ROOT.resolve()
        else str(path)
    )


def in_clone(path) -> Path:
    """A path as given when it exists from the working directory (or is absolute), else the
    clone's own file (the defaults under config/), so `-d <elsewhere>` finds them too.
    """
    p = Path(path)
    return p if p.is_absolute() or p.exists() else EB_ROOT / p


RUN = f"results/{config['run_name']}"
TASKS = task_specs(config)
RUNGS = sorted({t.rung for t in TASKS}, key=[t.rung for t in TASKS].index)
#: the bounds jobs: RUNGS in groups of rungs_per_job, each named by its rungs ("L0", or
#: "L0+L1+..."); a rung's bounds are computed alone whatever its group, so grouping changes
#: how many processes start (one torch import each), not a number
_PER_JOB = config.get("rungs_per_job", 1)
BOUNDS_GROUPS = {
    "+".join(group): group
    for group in (RUNGS[i : i + _PER_JOB] for i in range(0, len(RUNGS), _PER_JOB))
}
BOUNDS_GROUP_OF = {
    rung: name for name, group in BOUNDS_GROUPS.items() for rung in group
}


def package_code(*names):
    """The library code a rule's results depend on, as inputs, so that an edit reruns its jobs:
    each name a subpackage of src/entropic_bound (all its modules) or one module of it.
    """
    lib = EB_ROOT / "src" / "entropic_bound"
    files = []
    for name in names:
        one = lib / f"{name}.py"
        paths = [one] if one.exists() else sorted((lib / name).glob("*.py"))
        if not paths:
            raise ValueError(f"package_code: no library code named {name!r}")
        files += [repo_path(str(p.relative_to(EB_ROOT))) for p in paths]
    return files


#: the data-only spectra of every task, written by predict: the predictions are read from them, and
#: X3's ladder (floor_aware) reads P_attn's instead of making the tasks again
PREDICT_SPECTRA = f"{RUN}/predict/spectra.parquet"


#: the predict jobs (workflow/rules/predict.smk), name -> their tasks in the run's order: one job
#: for every task where one bounds group holds every rung (as the tasks stage: the paper run's
#: 12 s job), else one per random stream (r*, seed), whose tasks share X (tasks/grid.py)
PREDICT_PARTS = {"all": TASKS} if len(BOUNDS_GROUPS) == 1 else specs_by_stream(config)


def predict_part_task_files(wildcards):
    """The task files of one predict job (PREDICT_PARTS)."""
    return [task_file(t) for t in PREDICT_PARTS[wildcards.part]]


#: P_static's Σ xᵀx of each stream's X, written by the stream's predict job and read by the best
#: bounds of the static rungs as their moment G (bounds/moments.py), bitwise the G they would
#: form: one product of B·(nd)² per stream, not one more per static rung. Where the predict jobs
#: are per stream, the moments take the products route (n·d above bounds.moments'
#: MOMENTS_EINSUM_MAX_ND = 256; torch is not imported here) and the tasks are noise-free (a
#: noisy task's G is formed with its C, in one pass)
STREAM_GRAMS = (
    "all" not in PREDICT_PARTS
    and config["task"]["n"] * config["task"]["d"] > 256
    and config["task"]["sigma"] == 0
)


def stream_gram(task):
    """The Σ xᵀx file of a task's stream (its predict job's, PREDICT_PARTS' name)."""
    return f"{RUN}/predict_parts/r{task.r_star}_s{task.seed}.xtx.npz"


def predict_part_outputs(part):
    """A predict job's spectra, and its stream's Σ xᵀx where STREAM_GRAMS."""
    spectra = f"{RUN}/predict_parts/{part}.parquet"
    return (
        [spectra, f"{RUN}/predict_parts/{part}.xtx.npz"] if STREAM_GRAMS else [spectra]
    )


def group_grams(wildcards):
    """The Σ xᵀx file of each task of the static rungs of one bounds job, by rung and task file
    (none unless STREAM_GRAMS)."""
    if not STREAM_GRAMS:
        return {}
    return {
        rung: {task_file(t): stream_gram(t) for t in TASKS if t.rung == rung}
        for rung in BOUNDS_GROUPS[wildcards.group]
        if has_population(rung)
    }


def task_file(task):
    return f"{RUN}/tasks/{task.task_id}.npz"


def all_task_files():
    return [task_file(t) for t in TASKS]


def rung_task_files(rung):
    """Every task file of one rung."""
    return [task_file(t) for t in TASKS if t.rung == rung]


def group_task_files(wildcards):
    """Every task file of the rungs of one bounds job (BOUNDS_GROUPS), by rung."""
    return {rung: rung_task_files(rung) for rung in BOUNDS_GROUPS[wildcards.group]}


def rung_bounds_file(wildcards):
    """The bounds table that holds the rung's tasks (its bounds job's)."""
    return f"{RUN}/bounds/{BOUNDS_GROUP_OF[wildcards.rung]}.csv"


def train_task_files(wildcards):
    """Task files of one training job: chunk `chunk` of the rung's tasks."""
    chunk = chunks_of_rung(config, wildcards.rung)[int(wildcards.chunk)]
    return [task_file(t) for t in chunk]


#: the students of a training job, in the order it trains them: the rung's own class over its
#: ranks, then the static L0/L1 students (src/entropic_bound/train/stage.py, train_chunk's kind)
TRAIN_KINDS = ("sweep", "static")
#: the tables a training job writes for each kind
TRAIN_TABLES = ("metrics", "dynamics", "loss")


def train_job_outputs():
    """A training job's outputs, ``<table>_<kind>`` (rung and chunk left as wildcards)."""
    return {
        f"{table}_{kind}": f"{RUN}/train/{{rung}}/{kind}_c{{chunk}}.{table}.parquet"
        for kind in TRAIN_KINDS
        for table in TRAIN_TABLES
    }


#: the students' factors a training job keeps for the best-known bounds (train/factors.py)
TRAIN_FACTORS = f"{RUN}/train/{{rung}}/factors_c{{chunk}}.npz"


def train_factor_files():
    """Every training job's students' factors (train/factors.py)."""
    return [
        TRAIN_FACTORS.format(rung=rung, chunk=c)
        for rung in RUNGS
        for c in range(len(chunks_of_rung(config, rung)))
    ]


def group_train_files(wildcards):
    """The training outputs the best bounds of one bounds group read: each of its rungs'
    sweep metrics and students' factors, by rung."""
    return {
        rung: {
            "metrics": [
                f"{RUN}/train/{rung}/sweep_c{c}.metrics.parquet"
                for c in range(len(chunks_of_rung(config, rung)))
            ],
            "factors": [
                TRAIN_FACTORS.format(rung=rung, chunk=c)
                for c in range(len(chunks_of_rung(config, rung)))
            ],
        }
        for rung in BOUNDS_GROUPS[wildcards.group]
    }


def group_train_inputs(wildcards):
    """:func:`group_train_files` as one flat list (the rule's input)."""
    files = group_train_files(wildcards).values()
    return [p for f in files for kind in ("metrics", "factors") for p in f[kind]]


def train_outputs(table):
    """Every training job's `table` (metrics, dynamics or loss)."""
    return [
        f"{RUN}/train/{rung}/{kind}_c{c}.{table}.parquet"
        for rung in RUNGS
        for kind in TRAIN_KINDS
        for c in range(len(chunks_of_rung(config, rung)))
    ]


def get_final_output():
    return [*get_artifacts(), f"{RUN}/provenance.json"]


def get_artifacts():
    """Every table and figure the run writes (provenance.json lists each with its stamp)."""
    return [
        f"{RUN}/tables/data_only_predictions.csv",
        PREDICT_SPECTRA,
        f"{RUN}/tables/frontier.csv",
        f"{RUN}/tables/bounds.csv",
        *(f"{RUN}/tables/train_{t}.parquet" for t in ("metrics", "dynamics", "loss")),
        *INTERMEDIATE_TABLES,  # the analyses' tables under tables/ (analysis.smk)
        *ANALYSIS_OUTPUTS,  # claims, figures, T2-T4: workflow/rules/analysis.smk
        *(path for t in TRAIN_TABLES for path in train_outputs(t)),
        *train_factor_files(),  # the students' factors the best bounds start from
        BETA_TRAIN,  # the exploratory training job (exploratory.smk)
        DISTORTION_TABLE,  # C8 under distortion (train.smk; claims registration v4)
    ]


def targets() -> list[str]:
    """This invocation's targets as given (rules or files; none: the default target)."""
    return [str(t) for t in (workflow.dag_settings.targets or ())]


def builds_the_run() -> bool:
    """Whether this invocation builds RUN (the config's own run): False when every target is
    another study's, the scale study's (`snakemake scale`, common/scale.smk), the heads runs'
    (`snakemake heads`, `snakemake heads_study`) or the pretrained captures'
    (`snakemake pretrained_capture`); onerror and onsuccess then leave RUN alone.
    """
    # the heads study (heads.smk) is another run of its own: RUN is not built either
    others = (*HEADS_RULES, *STUDY_RULES, *PRETRAINED_RULES)
    prefixes = (f"{HEADS_DIR}/", f"{STUDY_DIR}/", f"{PRETRAINED_DIR}/")
    return not targets() or not all(
        t in others or t.startswith(prefixes) or is_scale_target(t) for t in targets()
    )


def partial_claims_runs(failed: bool) -> dict:
    """{run dir: config} of the runs whose partial claims onerror writes (``failed``) or
    onsuccess clears: RUN when this invocation builds it; with the scale study among the
    targets, each of its runs that has started, those without claims.md after a failure (a
    finished run keeps its own claims), those with it after a success."""
    runs = {RUN: config} if builds_the_run() else {}
    if any(is_scale_target(t) for t in targets()):
        for s in SCALES.values():
            run = f"results/{s['run_name']}"
            finished = Path(run, "claims.md").exists()
            if run not in runs and Path(run).is_dir() and finished is not failed:
                runs[run] = config if s["own"] else s["values"]
    return runs


def write_partial_claims():
    """onerror: a claims table from the jobs that finished (failed inputs: missing input)."""
    from entropic_bound.claims import claims_text
    from entropic_bound.core.io import PARTIAL_DIR
    from entropic_bound.claims.stage import claims_after_failure

    for run, cfg in partial_claims_runs(failed=True).items():
        try:
            table = claims_after_failure(cfg, CLAIMS, run)
        except Exception as exc:  # never mask the failure that brought us here
            print(f"entropic-bound: no partial claims table ({exc})", file=sys.stderr)
            continue
        print(claims_text(table), file=sys.stderr)
        print(
            f"entropic-bound: some jobs failed; partial claims in {run}/{PARTIAL_DIR}/claims.md",
            file=sys.stderr,
        )


def clear_partial_claims():
    """onsuccess: the partial claims of an earlier failed run are out of date."""
    from entropic_bound.core.io import clear_partial

    for run in partial_claims_runs(failed=False):
        clear_partial(run)


# --- a config edit reruns the jobs it changes ---
# The scripts read `snakemake.config`, which Snakemake's params rerun trigger cannot see: every
# job that computes results declares, as `params: reads=reads(stage)`, a digest of the config
# sections its stage reads (its script and the library functions it hands the config to), so
# an edited config reruns the jobs whose sections changed and everything downstream, nothing
# before them: the task files are kept, not temp() (tasks.smk; docs/reproducibility.md, "Disk").
# `run_name` names the run; `threads` is left out so that a run moved to a machine with more
# cores is not redone (the fused kernel computes each student on one thread, the same bits at
# any thread count).
STAGE_READS = {
    "tasks": ("seed", "task"),
    "bounds": ("seed", "task", "bounds"),  # less bounds.best (STAGE_OMITS)
    "best_bounds": ("seed", "task", "bounds"),
    "predict": ("seed", "task", "predict"),
    "train": ("seed", "task", "train", "device"),
    "frontier": ("seed", "frontier", "predict"),
    "boundaries": ("seed", "frontier", "predict", "exploratory"),
    "train_beta": ("seed", "task", "train", "device", "exploratory"),
    # and claims.yaml's v4.C8.conditions (a parameter of the rule)
    "train_distortion": ("seed", "task", "train", "device"),
    "c8_by_beta": ("seed", "task", "exploratory"),
    "floor_aware": ("seed", "task", "predict", "frontier", "exploratory"),
    "analyses": ("predict",),
}


#: keys of a section that a stage does not read: registration v2's bounds, which training
#: reads, do not depend on the best-known bounds' settings (an edit of them reruns only those)
STAGE_OMITS = {"bounds": {"bounds": ("best",)}}


def reads(stage: str) -> str:
    """The digest of the config sections ``stage`` reads (a rule's ``params.reads``)."""
    omit = STAGE_OMITS.get(stage, {})
    return config_hash(
        {
            key: (
                {k: v for k, v in config[key].items() if k not in omit[key]}
                if key in omit
                else config[key]
            )
            for key in STAGE_READS[stage]
        }
    )


# --- by concern, in files of their own ---
include: "common/report.smk"  # the report's entries; the figures' inputs and outputs
include: "common/resources.smk"  # what a job asks a cluster for
include: "common/scale.smk"  # the scale study's list of configs
include: "common/heads.smk"  # the heads runs' params and files
