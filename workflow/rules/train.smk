rule train:
    """One batched training job on one chunk of a rung's tasks, both kinds of students in turn:
    the rung's own class over its ranks (sweep: every rank, or the ranks a rank search picks
    with train.ranks: search), then the static L0/L1 full-rank students (static). One process
    for both: torch and the kernel load once, not once per kind."""
    input:
        tasks=train_task_files,
        bounds=rung_bounds_file,
    output:
        **train_job_outputs(),
        # the sweep's students at the bounds' ranks, for the best-known bounds (bounds.smk)
        factors=TRAIN_FACTORS,
    log:
        f"{RUN}/logs/train/{{rung}}_c{{chunk}}.log",
    benchmark:
        f"{RUN}/benchmarks/train/{{rung}}_c{{chunk}}.tsv"
    wildcard_constraints:
        chunk=r"\d+",
    conda:
        "../../envs/compute.yaml"
    threads: config["threads"]
    resources:
        mem_mb=by_attempt(train_mem_mb()),
        runtime=runtime_by_attempt(train_runtime()),
        gpu=train_gpus(),
    params:
        reads=reads("train"),
        epsilon_task_factor=CLAIMS["v2"]["epsilon_task_factor"],
        kinds=TRAIN_KINDS,
    script:
        "../scripts/train.py"


rule collect_train:
    """Every training job's tables in one place: metrics, spectrum checkpoints, loss curves."""
    input:
        metrics=train_outputs("metrics"),
        dynamics=train_outputs("dynamics"),
        loss=train_outputs("loss"),
    output:
        metrics=f"{RUN}/tables/train_metrics.parquet",
        dynamics=f"{RUN}/tables/train_dynamics.parquet",
        loss=f"{RUN}/tables/train_loss.parquet",
    log:
        f"{RUN}/logs/collect_train.log",
    localrule: True
    conda:
        "../../envs/compute.yaml"
    script:
        "../scripts/collect_train.py"


#: C8 under distortion (claims registration v4; src/entropic_bound/train/distortion.py)
DISTORTION_TABLE = f"{RUN}/tables/C8_distortion.parquet"

# no torch at parse time
from entropic_bound.train.distortion import distortion_conditions  # noqa: E402


rule train_distortion:
    """Full-rank students on every L4 task's L4 targets at each β of v4.C8.conditions and
    on its L3 twin (same A, V, X), noisy, at a budget of n·d sequences (one job)."""
    input:
        code=package_code("train/distortion"),
    output:
        DISTORTION_TABLE,
    log:
        f"{RUN}/logs/train/L4_distortion.log",
    benchmark:
        f"{RUN}/benchmarks/train/L4_distortion.tsv"
    conda:
        "../../envs/compute.yaml"
    threads: config["threads"]
    resources:
        mem_mb=by_attempt(train_mem_mb()),
        runtime=runtime_by_attempt(train_runtime()),
        gpu=train_gpus(),
    params:
        reads=reads("train_distortion"),
        # config/claims.yaml's v4.C8.conditions: an edit of them reruns this job alone
        conditions=distortion_conditions(CLAIMS),
    script:
        "../scripts/train_distortion.py"
