rule tasks:
    """Every teacher task of the run, in one job: X/Y train/test (or their seeds), kernel, V, P
    and meta per task. One job, not one per rung: a task takes ~0.2 s to make and a job ~1 s
    to start (torch's import), and every consumer of a rung's tasks reads them only after the
    first job of the run (docs/performance.md, "The paper run")."""
    output:
        temp(all_task_files()),
    log:
        f"{RUN}/logs/tasks.log",
    benchmark:
        f"{RUN}/benchmarks/tasks.tsv"
    # first: every bounds, training and predict job waits for it
    priority: 3
    conda:
        "../../envs/compute.yaml"
    threads: 1
    resources:
        mem_mb=by_attempt(tasks_mem_mb()),
        runtime=runtime_by_attempt(5 + 5 * len(RUNGS)),
    params:
        reads=reads("tasks"),
    script:
        "../scripts/tasks.py"
