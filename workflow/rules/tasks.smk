rule tasks:
    """Teacher tasks of one rung: X/Y train/test, kernel, V, P and meta per task."""
    output:
        temp(
            expand(
                "{run}/tasks/{{rung}}_r{r_star}_s{seed}.npz",
                run=RUN,
                r_star=config["task"]["r_star"],
                seed=config["task"]["seeds"],
            ),
        ),
    log:
        f"{RUN}/logs/tasks/{{rung}}.log",
    benchmark:
        f"{RUN}/benchmarks/tasks/{{rung}}.tsv"
    conda:
        "../../envs/compute.yaml"
    threads: 1
    resources:
        mem_mb=by_attempt(tasks_mem_mb()),
        runtime=runtime_by_attempt(10),
    params:
        reads=reads("tasks"),
    script:
        "../scripts/tasks.py"
