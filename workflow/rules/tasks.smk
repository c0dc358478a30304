# The teacher tasks: X/Y train/test (or their seeds), kernel, V, P and meta per task. A task takes
# ~0.1 s to make at paper scale and a job ~1 s to start (python and torch), so when rungs_per_job
# covers every rung (config.yaml) one job makes them all; otherwise (d ≥ 32, where a rung takes
# tens of seconds) one job per rung, side by side (docs/performance.md, "The paper run").
ONE_TASKS_JOB = len(BOUNDS_GROUPS) == 1
#: the job's name in its log and benchmark paths: "tasks", or "tasks/<rung>" per rung
TASKS_JOB = "tasks" if ONE_TASKS_JOB else "tasks/{rung}"


rule tasks:
    """Every task of the run in one job, or of one rung (ONE_TASKS_JOB). The files are kept, not
    temp(): a temporary task file that a rerun job needs is made again, and Snakemake then reruns
    every job that reads it, so an edit of `train` would rerun predict and bounds
    (docs/reproducibility.md, "Disk")."""
    output:
        all_task_files()
        if ONE_TASKS_JOB
        else expand(
            "{run}/tasks/{{rung}}_r{r_star}_s{seed}.npz",
            run=RUN,
            r_star=config["task"]["r_star"],
            seed=config["task"]["seeds"],
        ),
    log:
        f"{RUN}/logs/{TASKS_JOB}.log",
    benchmark:
        f"{RUN}/benchmarks/{TASKS_JOB}.tsv"
    # first: every bounds, training and predict job waits for the tasks
    priority: 3
    conda:
        "../../envs/compute.yaml"
    threads: 1
    resources:
        mem_mb=by_attempt(tasks_mem_mb()),
        runtime=runtime_by_attempt(5 + 5 * len(RUNGS) if ONE_TASKS_JOB else 10),
    params:
        reads=reads("tasks"),
    script:
        "../scripts/tasks.py"
