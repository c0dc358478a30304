# The teacher tasks: X/Y train/test (or their seeds), kernel, V, P and meta per task. A task takes
# ~0.1 s to make at paper scale and a job ~1 s to start (python and torch), so when rungs_per_job
# covers every rung (config.yaml) one job makes them all; otherwise (d ≥ 32, where a rung takes
# tens of seconds) one job per rung, side by side (docs/performance.md, "The paper run").

if len(BOUNDS_GROUPS) == 1:

    rule tasks:
        """Every task of the run, in one job."""
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

else:

    rule tasks:
        """Every task of one rung."""
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
        priority: 3
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
