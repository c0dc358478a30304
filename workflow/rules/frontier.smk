rule frontier:
    """The predictability frontier grid (no training): r_hat per cell, predictor, estimator."""
    output:
        f"{RUN}/tables/frontier.csv",
    log:
        f"{RUN}/logs/frontier.log",
    benchmark:
        f"{RUN}/benchmarks/frontier.tsv"
    # the longest job of the paper run: started first, beside the tasks-bounds-training chain
    priority: 2
    conda:
        "../../envs/compute.yaml"
    threads: config["threads"]
    resources:
        mem_mb=by_attempt(6000),
        runtime=runtime_by_attempt(20),
    params:
        reads=reads("frontier"),
    script:
        "../scripts/frontier.py"
