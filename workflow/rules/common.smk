# Shared helpers and input functions (no rules here).
import os
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


def config_or_exit(check, *args, **kwargs):
    """``check(*args, **kwargs)``; a ConfigError ends the parse: one line on stderr, exit 2."""
    try:
        return check(*args, **kwargs)
    except ConfigError as exc:
        print(f"entropic-bound: error: {exc}", file=sys.stderr)
        sys.exit(2)


# Before any rule: every config file strictly re-read, the merged config and the claims
# validated (src/entropic_bound/config/load.py). A bad config is one line on stderr and exit 2.
CLAIMS = config_or_exit(
    check_workflow_config,
    config,
    workflow.configfiles,
    EB_ROOT / "config" / "claims.yaml",
    # --config values: Snakemake leaves nested ones text ('train={"classes": ...}')
    getattr(getattr(workflow, "config_settings", None), "overwrite_config", None),
)


def repo_path(rel: str) -> str:
    """A file of the clone as an input: relative from the clone's root, else absolute."""
    path = EB_ROOT / rel
    return (
        os.path.relpath(path)
        if Path.cwd().resolve() == EB_ROOT.resolve()
        else str(path)
    )


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


# --- the report (`snakemake --report`) ---
# The report sorts categories and subcategories by name: the numbers put the claims and the
# provenance first. Subcategories: by claim for figures, by stage for tables; labels carry both.
_CLAIMS_CAT = "1 Claims and provenance"
_EXPLORATORY = "4 Exploratory (no verdict)"
#: the tables' report entries (figures: their FigureSpec, workflow/rules/figures.smk)
_REPORT_ITEMS = {  # id: (category, subcategory, claims, stage)
    "T1": (_CLAIMS_CAT, "Verdicts C1-C9", "C1-C9", "claims"),
    "claims_md": (_CLAIMS_CAT, "Verdicts C1-C9", "C1-C9", "claims"),
    "controls": (_CLAIMS_CAT, "Controls", "C1-C9", "claims"),
    "provenance": (_CLAIMS_CAT, "Provenance", "C1-C9", "provenance"),
    "T2": ("3 Tables", "Training and prediction", "C4, C5, C6", "training"),
    "T3": ("3 Tables", "Estimators", "C8", "training"),
    "T4": ("3 Tables", "Frontier", "C9", "frontier"),
    "bounds": ("3 Tables", "Class bounds", "C1, C2, C6, C7 (v2)", "bounds"),
    "X1_table": (_EXPLORATORY, "Frontier boundaries", "C9", "frontier"),
    "X2_table": (_EXPLORATORY, "C8 where softmax distorts", "C8", "training"),
    "X3_table": (_EXPLORATORY, "The floor-aware rank", "C8, C9", "frontier"),
    "scale": (_EXPLORATORY, "Verdict by scale", "C1-C9", "scale"),
}
#: report() arguments of every report item: caption, category, subcategory, labels
REPORT = {
    key: dict(
        caption=f"../report/{key}.rst",
        category=category,
        subcategory=subcategory,
        labels={"item": key.replace("_md", ".md"), "claims": claims, "stage": stage},
    )
    for key, (category, subcategory, claims, stage) in _REPORT_ITEMS.items()
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
    ]


#: the scale study's own rules (workflow/rules/scale.smk): they drive other runs, never RUN
SCALE_RULES = ("scale", "scale_run", "scale_table")


def builds_the_run() -> bool:
    """Whether this invocation builds RUN (the config's own run): False when every target is the
    scale study's (`snakemake scale`), whose inner runs keep their own partial claims, or the
    heads runs' (`snakemake heads`, `snakemake heads_study`); onerror and onsuccess then leave
    RUN alone."""
    targets = [str(t) for t in (workflow.dag_settings.targets or ())]
    # the heads study (heads.smk) is another run of its own: RUN is not built either
    others = (*SCALE_RULES, *HEADS_RULES, *STUDY_RULES)
    prefixes = (f"{SCALE_DIR}/", f"{HEADS_DIR}/", f"{STUDY_DIR}/")
    return not targets or not all(
        t in others or t.startswith(prefixes) for t in targets
    )


def write_partial_claims():
    """onerror: a claims table from the jobs that finished (failed inputs: missing input)."""
    if not builds_the_run():
        return
    from entropic_bound.claims import claims_text
    from entropic_bound.core.io import PARTIAL_DIR
    from entropic_bound.claims.stage import claims_after_failure

    try:
        table = claims_after_failure(config, CLAIMS, RUN)
    except Exception as exc:  # never mask the failure that brought us here
        print(f"entropic-bound: no partial claims table ({exc})", file=sys.stderr)
        return
    print(claims_text(table), file=sys.stderr)
    print(
        f"entropic-bound: some jobs failed; partial claims in {RUN}/{PARTIAL_DIR}/claims.md",
        file=sys.stderr,
    )


def clear_partial_claims():
    """onsuccess: the partial claims of an earlier failed run are out of date."""
    if not builds_the_run():
        return
    from entropic_bound.core.io import clear_partial

    clear_partial(RUN)


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


# --- cluster resources ---
# What a job asks a cluster for (profiles/slurm/config.yaml turns it into sbatch options),
# derived from the config so that the large configs get what they need and the paper config
# what it always had. Estimates are upper bounds: float64 data for the data-only stages, every
# student running to max_steps, 5 GFLOP/s per CPU thread and 2 TFLOP/s on a GPU (both well
# below what the kernels reach). mem_mb and runtime (minutes) grow with the attempt: `retries: 1`
# in the profile resubmits a job that SLURM killed for memory or time, and the same request
# would fail again. Runtime never exceeds MAX_RUNTIME: a request over the partition's time
# limit would be rejected at submission.
from math import ceil  # noqa: E402


def max_runtime() -> int:
    """The most minutes any job asks for, retries included: env EB_MAX_RUNTIME_MIN (set it to
    your partition's time limit), default 1440 (24 h)."""
    raw = os.environ.get("EB_MAX_RUNTIME_MIN", "1440")
    if not raw.strip().isdigit() or int(raw) < 1:  # bad input: one line, exit 2
        print(
            f"entropic-bound: error: EB_MAX_RUNTIME_MIN={raw!r}: give the partition's "
            "time limit in whole minutes",
            file=sys.stderr,
        )
        sys.exit(2)
    return int(raw)


MAX_RUNTIME = max_runtime()

_T = config["task"]
#: one float64 [n_train, n, d] array in MB, the unit the data-only stages' memory grows with
DATA_MB = _T["n_train"] * _T["n"] * _T["d"] * 8 / 2**20


def by_attempt(base, cap=None):
    """A resource that is ``base`` on the first attempt and ``k * base`` on the k-th, at most
    ``cap``."""

    def resource(wildcards, attempt):
        value = ceil(base) * attempt
        return value if cap is None else min(value, cap)

    return resource


#: malloc_retain_mb keeps freed blocks in the process (core/runner.retain_freed_memory): at
#: d = 48 the peaks of predict and bounds were 2.3x and 1.6x those at the C library's default
#: (docs/performance.md), so the estimates that grow with the data double with it
RETAIN_FACTOR = 2 if config.get("malloc_retain_mb", 0) > 0 else 1


def runtime_by_attempt(base):
    """Minutes: ``base``, doubled on a retry, at most MAX_RUNTIME."""
    return by_attempt(base, cap=MAX_RUNTIME)


def tasks_mem_mb():
    """A task's data made in chunks (tasks/data.py): its float32 X/Y when the file holds them
    (counted twice, for the write), the float64 clean test targets, and ~10 float64 arrays of a
    chunk (16 MB each, a few of them [chunk, n, n])."""
    task_mb = (_T["n_train"] + _T["n_test"]) * _T["n"] * _T["d"] * 4 * 2 / 2**20
    test_mb = _T["n_test"] * _T["n"] * _T["d"] * 8 / 2**20
    chunk_mb = 10 * 16 * max(1, _T["n"] / _T["d"])
    return max(2000, 1000 + 2 * task_mb + test_mb + chunk_mb)


def predict_mem_mb():
    """P_static: X, Y and a noisy copy in float64, and the normal equations of vec(X), [nd, nd]
    (times RETAIN_FACTOR, the floor aside)."""
    normal_mb = (_T["n"] * _T["d"]) ** 2 * 8 / 2**20
    return max(4000, RETAIN_FACTOR * (1000 + 12 * DATA_MB + 5 * normal_mb))


def predict_runtime(jobs=1):
    """Minutes of one of ``jobs`` predict jobs, which share the tasks: P_static dominates,
    4 B (nd)^2 + 2 n^2 d^4 + 10 d^6 flops per task and noise level."""
    n, d, B = _T["n"], _T["d"], _T["n_train"]
    flops = 4 * B * (n * d) ** 2 + 2 * n**2 * d**4 + 10 * d**6
    fits = ceil(len(TASKS) / jobs) * (1 + len(config["predict"]["noisy_sigmas"]))
    return 20 + flops * fits / (5e9 * config["threads"]) / 60


def train_mem_mb():
    """A training job holds its tasks' float32 arrays twice (loaded, stacked), plus torch/CUDA."""
    task_mb = (_T["n_train"] + _T["n_test"]) * _T["n"] * _T["d"] * 4 * 2 / 2**20
    return max(4000, 3000 + 2 * config["train"]["tasks_per_job"] * task_mb)


def best_bounds_mem_mb():
    """A best-bounds job makes one task's data at a time (float32 X/Y, both splits). A static
    rung keeps of each task its test split and its two training moments [nd, nd] in float64, not
    its sample (bounds/moments.py: the moments are read from the sample in chunks of rows above
    n·d = 256, and the small configs' one float64 copy is within the floor). An input-dependent
    rung whose L-BFGS runs on the sample (bounds.best.max_iter > 0) holds its tasks whole and
    autograd's ~30 float64 arrays of one chunk of problems on every training sequence.
    """
    b = config["bounds"]["best"]
    n, d, B = _T["n"], _T["d"], _T["n_train"]
    task_mb = (B + _T["n_test"]) * n * d * 4 * 2 / 2**20
    test_mb = _T["n_test"] * n * d * 4 * 2 / 2**20
    per_rung = len(_T["r_star"]) * len(_T["seeds"])
    moments_mb = 2 * (n * d) ** 2 * 8 / 2**20
    static = task_mb + per_rung * (test_mb + moments_mb)
    chunk_mb = b["chunk"] * B * n * max(n, d) * 8 / 2**20
    sample = per_rung * task_mb + 30 * chunk_mb if b["max_iter"] else task_mb
    return max(2000, RETAIN_FACTOR * (1000 + max(static, sample)))


def bounds_mem_mb():
    """A bounds job holds one rung's tasks at a time (float32 X/Y, both splits), and L-BFGS's
    autograd keeps ~30 float64 arrays of one chunk of problems: [chunk, n_seqs, n, max(n, d)].
    """
    b = config["bounds"]
    task_mb = (_T["n_train"] + _T["n_test"]) * _T["n"] * _T["d"] * 4 * 2 / 2**20
    per_rung = len(_T["r_star"]) * len(_T["seeds"])
    chunk_mb = b["chunk"] * b["n_seqs"] * _T["n"] * max(_T["n"], _T["d"]) * 8 / 2**20
    return max(2000, RETAIN_FACTOR * (1000 + per_rung * task_mb + 30 * chunk_mb))


def train_runtime():
    """Minutes for one training job if every student ran max_steps (most stop far earlier): per
    task and seed, at most max(n, d) ranks of the sweep and the 2 static students."""
    n, d, train = _T["n"], _T["d"], config["train"]
    optims = [{**train["classes"]["default"], **c} for c in train["classes"].values()]
    samples = max(o["batch"] * o["max_steps"] for o in optims)  # per student
    students = train["tasks_per_job"] * (max(n, d) + 2) * len(train["student_seeds"])
    flops = 6 * (2 * n * d * d + 2 * n * n * d) * samples * students
    rate = 2e12 if config["device"] == "cuda" else 5e9 * config["threads"]
    return 30 + flops / rate / 60


def train_gpus():
    """GPUs per training job: one when the config says `device: cuda` (sbatch --gpus), else 0."""
    return 1 if config["device"] == "cuda" else 0


# Verdict by scale (workflow/rules/scale.smk): config/scale/scales.yaml maps d to a config.
from entropic_bound.config.load import load_scale_list, scale_study_asked  # noqa: E402
from entropic_bound.config.relations import SCALE_RUN_NAME  # noqa: E402


def in_clone(path) -> Path:
    """A path as given when it exists from the working directory (or is absolute), else the
    clone's own file (the defaults under config/), so `-d <elsewhere>` finds them too.
    """
    p = Path(path)
    return p if p.is_absolute() or p.exists() else EB_ROOT / p


SCALE_LIST = in_clone(config.get("scale_list", "config/scale/scales.yaml"))
SCALE_DIR = f"results/{SCALE_RUN_NAME}"


# `snakemake scale` checks the list and every config it names here, before any job (a bad one
# would otherwise fail inside the study after the scales before it had run). Any other run
# leaves the list alone: a user who edits config/config.yaml (the list's d = 16 entry) to
# another d must still be able to run it.
SCALES = {}
if scale_study_asked(sys.argv, config):
    SCALES = {
        s["d"]: s
        for s in config_or_exit(
            load_scale_list,
            SCALE_LIST,
            resolve=in_clone,
            base=EB_ROOT / "config" / "config.yaml",
            claims=CLAIMS,
        )
    }


def scale_config(wildcards):
    return SCALES[int(wildcards.d)]["config"]


def scale_run_dir(wildcards):
    return f"results/{SCALES[int(wildcards.d)]['run_name']}"


# --- figures: inputs, outputs and report entries from each FigureSpec (figures.smk) ---
from entropic_bound.figures.spec import (  # noqa: E402
    FIGURES,
    figure_tables,
    figures_of_rule,
    reference_file,
    table_file,
    tables_of_rule,
)


def figure_outputs(rule):
    """The PNG (in the report, under its spec's category and caption) and PDF of each figure
    whose FigureSpec (src/entropic_bound/figures/spec.py) names ``rule``."""
    out = {}
    for fid in figures_of_rule(rule):
        path = f"{RUN}/figures/{FIGURES[fid].stem}"
        out[f"{fid}_png"] = report(f"{path}.png", **figure_report(FIGURES[fid]))
        out[f"{fid}_pdf"] = f"{path}.pdf"
    return out


def reference_figure_inputs():
    """Every table a figure reads, from the shipped reference (REFERENCE), keyed by stem."""
    return {t: repo_path(f"{REFERENCE}/{reference_file(t)}") for t in figure_tables()}


def reference_figure_outputs():
    """The PNG and PDF of every figure, under REFERENCE_FIGURES (not in the report)."""
    return {
        f"{fid}_{ext}": f"{REFERENCE_FIGURES}/{f.stem}.{ext}"
        for fid, f in FIGURES.items()
        for ext in ("png", "pdf")
    }


def figure_report(spec):
    """report() arguments of a figure, from its FigureSpec."""
    return dict(
        # Snakemake reads a caption relative to the rule file (workflow/rules/), not the working
        # directory: the same form as the tables' captions (REPORT above), from any directory
        caption=os.path.relpath(EB_ROOT / spec.caption, EB_ROOT / "workflow" / "rules"),
        category=spec.category,
        subcategory=spec.subcategory,
        labels={"item": spec.fid, "claims": spec.claims, "stage": spec.stage},
    )


def figure_inputs(rule):
    """The cached tables the figures of ``rule`` read, keyed by table stem."""
    return {t: f"{TABLES}/{table_file(t)}" for t in tables_of_rule(rule)}


# --- the heads runs (workflow/rules/heads.smk: HEADS_RUNS, STUDY, STUDY_DIR) ---
def heads_cfg(job: str):
    """params.heads of ``job``: the model's config cut to what the job reads (its sections,
    the seed, device and names), so that an edit of another section (predict's, say) never
    reruns it (Snakemake reruns a job whose params changed)."""

    def cfg(wildcards) -> dict:
        full = HEADS_RUNS[wildcards.hrun]
        keys = ("run_name", "seed", "device", "threads", *HEADS_SECTIONS[job])
        return {k: full[k] for k in keys}

    return cfg


def heads_threads(wildcards) -> int:
    return HEADS_RUNS[wildcards.hrun]["threads"]


def study_model_files(name: str) -> list[str]:
    """The file ``name`` (a key of heads.study.MODEL_FILES) of every model of the study."""
    from entropic_bound.heads.study import MODEL_FILES

    return [f"{STUDY_DIR}/{mid}/{MODEL_FILES[name]}" for mid in STUDY["models"]]


def study_benchmarks(which: str) -> dict:
    """{model: {job: benchmark file}} of the study's jobs (``cost``: training and measuring;
    ``predict``: predict's), read by its verdict and predict jobs."""
    from entropic_bound.heads.study import COST_JOBS, PREDICT_JOBS

    jobs = COST_JOBS if which == "cost" else PREDICT_JOBS
    return {
        mid: {job: f"{STUDY_DIR}/{mid}/benchmarks/{job}.tsv" for job in jobs}
        for mid in STUDY["models"]
    }


def study_dir_of(wildcards, output) -> str:
    """The study's directory, from its markdown page's path (params.run_dir)."""
    return os.path.dirname(output.md)
