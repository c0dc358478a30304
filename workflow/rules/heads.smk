# Real heads, measured (docs/method.md §9; src/entropic_bound/heads/): exploratory, reported,
# no verdict, and not part of reproduce-all. `snakemake heads` trains a small causal transformer
# on the Python standard library's sources and measures every head. Its config is its own file
# (default config/heads.yaml; another with `--config heads_config=<file>`), checked at parse
# time whenever the study may run (src/entropic_bound/config/heads.py); outputs under
# results/<its run_name>/.
from entropic_bound.config.heads import (  # noqa: E402
    HEADS_RULES,
    HEADS_CONFIG_KEY,
    heads_asked,
    load_heads_config,
)

HEADS_CONFIG = in_clone(config.get(HEADS_CONFIG_KEY, "config/heads.yaml"))
HEADS = (
    config_or_exit(load_heads_config, HEADS_CONFIG)
    if heads_asked(sys.argv, config)
    else {"run_name": "heads", "threads": 1}
)
HEADS_DIR = f"results/{HEADS['run_name']}"


# params.reads of each job: a digest of the heads config's sections it reads, so that an edit
# reruns it (`threads` left out, as in the pipeline)
HEADS_READS = {
    job: config_hash({key: HEADS.get(key) for key in ("seed", "device", *sections)})
    for job, sections in {
        "train": ("corpus", "model", "train"),
        "measure": ("corpus", "model", "train", "measure"),
    }.items()
}


rule heads:
    """The heads study: the per-head table, the figures and the summary."""
    input:
        md=f"{HEADS_DIR}/heads.md",
        table=f"{HEADS_DIR}/tables/heads.csv",
        png=f"{HEADS_DIR}/figures/H1_knees.png",
    log:
        f"{HEADS_DIR}/logs/heads.log",
    localrule: True
    conda:
        "../../envs/compute.yaml"
    shell:
        "cat {input.md} | tee {log}"


rule heads_train:
    """Train the heads model on the corpus; its weights and the training curve."""
    input:
        code=package_code(
            "heads/corpus", "heads/dedup", "heads/model", "heads/train", "heads/stage"
        ),
    output:
        model=f"{HEADS_DIR}/model.pt",
        curve=f"{HEADS_DIR}/tables/training_curve.csv",
    log:
        f"{HEADS_DIR}/logs/heads_train.log",
    benchmark:
        f"{HEADS_DIR}/benchmarks/heads_train.tsv"
    conda:
        "../../envs/compute.yaml"
    threads: HEADS["threads"]
    resources:
        mem_mb=by_attempt(4000),
        runtime=runtime_by_attempt(60),
    params:
        heads=HEADS,
        reads=HEADS_READS["train"],
    script:
        "../scripts/heads_train.py"


rule heads_measure:
    """Every head: its truncation knee and the ranks of its three spectra."""
    input:
        model=f"{HEADS_DIR}/model.pt",
        code=package_code(
            *(
                f"heads/{m}"
                for m in ("corpus", "model", "stage", "capture", "knees", "ranks")
            ),
            "heads/measure",
            "heads/dedup",
            "predict/attention",
            "predict/base",
            "core/estimators",
        ),
    output:
        table=f"{HEADS_DIR}/tables/heads.csv",
        curves=f"{HEADS_DIR}/tables/knee_curves.csv",
        windows=f"{HEADS_DIR}/tables/knee_windows.parquet",
    log:
        f"{HEADS_DIR}/logs/heads_measure.log",
    benchmark:
        f"{HEADS_DIR}/benchmarks/heads_measure.tsv"
    conda:
        "../../envs/compute.yaml"
    threads: HEADS["threads"]
    resources:
        mem_mb=by_attempt(4000),
        runtime=runtime_by_attempt(60),
    params:
        heads=HEADS,
        reads=HEADS_READS["measure"],
    script:
        "../scripts/heads_measure.py"


rule heads_report:
    """Which estimator names the knee, the figures, the summary page."""
    input:
        model=f"{HEADS_DIR}/model.pt",
        table=f"{HEADS_DIR}/tables/heads.csv",
        curves=f"{HEADS_DIR}/tables/knee_curves.csv",
        windows=f"{HEADS_DIR}/tables/knee_windows.parquet",
        curve=f"{HEADS_DIR}/tables/training_curve.csv",
        code=package_code(
            *(
                f"heads/{m}"
                for m in (
                    "report",
                    "figure",
                    "ranks",
                    "reliability",
                    "baselines",
                    "stats",
                )
            ),
            "core/estimators",
            "analysis/columns",
        ),
    output:
        agreement=f"{HEADS_DIR}/tables/estimators.csv",
        reliability=f"{HEADS_DIR}/tables/knee_reliability.csv",
        sensitivity=f"{HEADS_DIR}/tables/knee_sensitivity.csv",
        md=f"{HEADS_DIR}/heads.md",
        png=f"{HEADS_DIR}/figures/H1_knees.png",
        pdf=f"{HEADS_DIR}/figures/H1_knees.pdf",
        curve_png=f"{HEADS_DIR}/figures/H2_training_curve.png",
        curve_pdf=f"{HEADS_DIR}/figures/H2_training_curve.pdf",
    log:
        f"{HEADS_DIR}/logs/heads_report.log",
    localrule: True
    conda:
        "../../envs/plot.yaml"
    params:
        heads=HEADS,
    script:
        "../scripts/heads_report.py"
