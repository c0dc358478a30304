# Class bounds (src/entropic_bound/bounds/): R*_c(r) of every task at the ranks the claims test
# (L0 exact, the other classes by direct optimisation) and ε_task, which the rung's training
# jobs read; registration v2 of the claims compares every risk with its class's own bound.
# After training, best_bounds adds the best-known bound of every (task, rank) by independent
# routes (population objective, L-BFGS on the students' training set from registered starts,
# the students themselves); tables/bounds.csv holds both.


rule bounds:
    """R*_c(r) of the tasks of rungs_per_job rungs (docs/method.md §5b, "Class bounds"):
    one job for the paper grid's 8 rungs (7 torch imports saved), one per rung at d ≥ 32.
    """
    input:
        lambda wildcards: [p for ps in group_task_files(wildcards).values() for p in ps],
        code=package_code("bounds"),
    output:
        f"{RUN}/bounds/{{group}}.csv",
    log:
        f"{RUN}/logs/bounds/{{group}}.log",
    benchmark:
        f"{RUN}/benchmarks/bounds/{{group}}.tsv"
    # right after the tasks: every training job waits for its rung's bounds
    priority: 3
    conda:
        "../../envs/compute.yaml"
    threads: config["threads"]
    resources:
        mem_mb=by_attempt(bounds_mem_mb()),
        # 30 min whatever the group: rungs share a job only where they take seconds (rungs_per_job)
        runtime=runtime_by_attempt(30),
    params:
        reads=reads("bounds"),
        task_files=group_task_files,
    script:
        "../scripts/bounds.py"


rule best_bounds:
    """The best-known bound R̂*_c(r) of every (task, rank) of the group's v2 bounds
    (docs/method.md §5b, "Best-known bounds"): v2's rows, every column as it is, with one
    column per route and their minimum, after the group's training jobs.
    """
    input:
        lambda wildcards: [p for ps in group_task_files(wildcards).values() for p in ps],
        group_train_inputs,
        lambda wildcards: [
            g for m in group_grams(wildcards).values() for g in m.values()
        ],
        v2=f"{RUN}/bounds/{{group}}.csv",
        code=package_code("bounds", "train/factors"),
    output:
        f"{RUN}/best_bounds/{{group}}.csv",
    log:
        f"{RUN}/logs/best_bounds/{{group}}.log",
    benchmark:
        f"{RUN}/benchmarks/best_bounds/{{group}}.tsv"
    conda:
        "../../envs/compute.yaml"
    threads: config["threads"]
    resources:
        mem_mb=by_attempt(best_bounds_mem_mb()),
        runtime=runtime_by_attempt(60),
    params:
        reads=reads("best_bounds"),
        task_files=group_task_files,
        train_files=group_train_files,
        grams=group_grams,
    script:
        "../scripts/best_bounds.py"


rule collect_bounds:
    """Every rung's bounds in one table: v2's columns as they are, and the best-known bounds."""
    input:
        expand("{run}/best_bounds/{group}.csv", run=RUN, group=BOUNDS_GROUPS),
    output:
        report(f"{RUN}/tables/bounds.csv", **REPORT["bounds"]),
    log:
        f"{RUN}/logs/collect_bounds.log",
    localrule: True
    conda:
        "../../envs/compute.yaml"
    script:
        "../scripts/collect_bounds.py"
