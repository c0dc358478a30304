# Class bounds (src/entropic_bound/bounds/): R*_c(r) of every task at the ranks the claims test
# (L0 exact, the other classes by direct optimisation) and ε_task, which the rung's training
# jobs read; registration v2 of the claims compares every risk with its class's own bound.


rule bounds:
    """R*_c(r) of one rung's tasks (docs/method.md §5b, "Class bounds")."""
    input:
        rung_task_files,
        code=package_code("bounds"),
    output:
        f"{RUN}/bounds/{{rung}}.csv",
    log:
        f"{RUN}/logs/bounds/{{rung}}.log",
    benchmark:
        f"{RUN}/benchmarks/bounds/{{rung}}.tsv"
    conda:
        "../../envs/compute.yaml"
    threads: config["threads"]
    resources:
        mem_mb=by_attempt(train_mem_mb()),
        runtime=runtime_by_attempt(30),
    params:
        reads=reads("bounds"),
    script:
        "../scripts/bounds.py"


rule collect_bounds:
    """Every rung's bounds in one table."""
    input:
        expand("{run}/bounds/{rung}.csv", run=RUN, rung=RUNGS),
    output:
        report(f"{RUN}/tables/bounds.csv", **REPORT["bounds"]),
    log:
        f"{RUN}/logs/collect_bounds.log",
    localrule: True
    conda:
        "../../envs/compute.yaml"
    script:
        "../scripts/collect_bounds.py"
