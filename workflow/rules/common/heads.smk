# The heads runs (workflow/rules/heads.smk: HEADS_RUNS, STUDY, STUDY_DIR): params and files.
# Included by common.smk; no rules here.
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
