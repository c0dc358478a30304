# Beyond the verdicts (docs/method.md §8; src/entropic_bound/exploratory/): analyses that were not pre-registered, computed from
# cached intermediates like everything else, labelled "exploratory: no verdict" and read by
# no claim. Config: `exploratory` in config/config.yaml.
EXPLORATORY = config["exploratory"]
#: the one extra training job (full-rank L4 students at every β of exploratory.c8_beta)
BETA_TRAIN = f"{RUN}/train/L4/full_rank_beta.metrics.parquet"


rule boundaries:
    """Noise tolerance σ50/σ95 of every data-only predictor, by n, β and data budget B, and
    σ_exact of every teacher of P_invert and its linear twin (X1_teachers)."""
    input:
        code=package_code("frontier", "predict"),
    output:
        boundaries=report(f"{TABLES}/X1_boundaries.csv", **REPORT["X1_table"]),
        teachers=f"{TABLES}/X1_teachers.csv",
    log:
        f"{RUN}/logs/boundaries.log",
    benchmark:
        f"{RUN}/benchmarks/boundaries.tsv"
    # long and needed by no training job: started early, not left to the run's end
    priority: 1
    conda:
        "../../envs/compute.yaml"
    threads: config["threads"]
    resources:
        mem_mb=by_attempt(4000),
        runtime=by_attempt(20),
    params:
        reads=reads("boundaries"),
        claims=CLAIMS,
    script:
        "../scripts/boundaries.py"


rule train_beta:
    """Full-rank L4 students on the L4 tasks at every β of exploratory.c8_beta (one job)."""
    input:
        code=package_code("exploratory/c8_by_beta"),
    output:
        BETA_TRAIN,
    log:
        f"{RUN}/logs/train/L4_full_rank_beta.log",
    benchmark:
        f"{RUN}/benchmarks/train/L4_full_rank_beta.tsv"
    conda:
        "../../envs/compute.yaml"
    threads: config["threads"]
    resources:
        mem_mb=by_attempt(train_mem_mb()),
        runtime=runtime_by_attempt(train_runtime()),
        gpu=train_gpus(),
    params:
        reads=reads("train_beta"),
    script:
        "../scripts/train_beta.py"


rule c8_by_beta:
    """Every C8 estimator by β on learned full-rank L4 kernels and data-only P_attn kernels."""
    input:
        learned=BETA_TRAIN,
        frontier=f"{TABLES}/frontier.csv",
        code=package_code("exploratory/c8_by_beta"),
    output:
        report(f"{TABLES}/X2_c8_by_beta.csv", **REPORT["X2_table"]),
    log:
        f"{RUN}/logs/c8_by_beta.log",
    localrule: True
    conda:
        "../../envs/compute.yaml"
    params:
        reads=reads("c8_by_beta"),
        claims=CLAIMS,
    script:
        "../scripts/c8_by_beta.py"


rule floor_aware:
    """X3: the floor-aware rank beside r_E(0.99), frontier (held-out seeds) and ladder."""
    input:
        code=package_code(
            "exploratory/floor_aware", "frontier", "predict", "core/estimators"
        ),
        # the ladder's P_attn spectra, from predict (none when the ladder is off)
        spectra=(
            [PREDICT_SPECTRA] if config["exploratory"]["floor_aware"]["ladder"] else []
        ),
    output:
        report(f"{TABLES}/X3_floor_aware.csv", **REPORT["X3_table"]),
    log:
        f"{RUN}/logs/floor_aware.log",
    benchmark:
        f"{RUN}/benchmarks/floor_aware.tsv"
    # long and needed by no training job: started early, not left to the run's end
    priority: 1
    conda:
        "../../envs/compute.yaml"
    threads: config["threads"]
    resources:
        mem_mb=by_attempt(4000),
        runtime=by_attempt(20),
    params:
        reads=reads("floor_aware"),
    script:
        "../scripts/floor_aware.py"
