# Class bounds (src/entropic_bound/bounds/): R*_c(r) of every task at the ranks the claims test
# (L0 exact, the other classes by direct optimisation) and ε_task, which the rung's training
# jobs read; registration v2 of the claims compares every risk with its class's own bound.


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


rule collect_bounds:
    """Every rung's bounds in one table."""
    input:
        expand("{run}/bounds/{group}.csv", run=RUN, group=BOUNDS_GROUPS),
    output:
        report(f"{RUN}/tables/bounds.csv", **REPORT["bounds"]),
    log:
        f"{RUN}/logs/collect_bounds.log",
    localrule: True
    conda:
        "../../envs/compute.yaml"
    script:
        "../scripts/collect_bounds.py"
