# Real heads (docs/method.md §9, §9b, §9c; src/entropic_bound/heads/), not part of
# reproduce-all. `snakemake heads` trains a small causal transformer on real text and measures
# every head (exploratory); `snakemake heads_study` trains the registered study's models (cells ×
# seeds of config/heads_study.yaml), measures them the same way and decides the registration
# (config/heads_claims.yaml). Each config is its own file (`--config heads_config=<file>`,
# `heads_study_config=<file>`), checked at parse time whenever its target may run
# (src/entropic_bound/config/heads.py, heads_study.py). A model's jobs (train, measure, predict,
# report) are one set of rules over `results/{hrun}/`, where hrun is the single run's run_name or
# <study run_name>/<cell>_s<seed>.
import re

from entropic_bound.config.heads import (  # noqa: E402
    HEADS_RULES,
    HEADS_CONFIG_KEY,
    PREDICT_CLAIMS_KEY,
    heads_asked,
    load_heads_config,
    load_predict_claims,
)
from entropic_bound.config.heads_study import (  # noqa: E402
    PREDICT_HEADS_KEY,
    STUDY_CONFIG_KEY,
    STUDY_RULES,
    load_heads_study,
    study_asked,
)

HEADS_CONFIG = in_clone(config.get(HEADS_CONFIG_KEY, "config/heads.yaml"))
HEADS = (
    config_or_exit(load_heads_config, HEADS_CONFIG)
    if heads_asked(sys.argv, config)
    else {"run_name": "heads", "threads": 1}
)
HEADS_DIR = f"results/{HEADS['run_name']}"
STUDY_CONFIG = in_clone(config.get(STUDY_CONFIG_KEY, "config/heads_study.yaml"))
STUDY = (
    config_or_exit(
        load_heads_study, STUDY_CONFIG, EB_ROOT, config.get(PREDICT_HEADS_KEY)
    )
    if study_asked(sys.argv, config)
    else {"run_name": "heads_study", "models": {}, "threads": 1}
)
STUDY_DIR = f"results/{STUDY['run_name']}"
#: a registration of predict on the study's heads (`--config predict_registration=<file>`,
#: docs/method.md §9f): heads_study_predict then writes its verdicts
PREDICT_REGISTRATION = (
    in_clone(config[PREDICT_CLAIMS_KEY]) if config.get(PREDICT_CLAIMS_KEY) else None
)
PREDICT_CLAIMS = (
    config_or_exit(load_predict_claims, PREDICT_REGISTRATION)
    if PREDICT_REGISTRATION
    else None
)
#: every heads model this invocation may build: hrun -> its heads config
HEADS_RUNS = {
    **({HEADS["run_name"]: HEADS} if "model" in HEADS else {}),
    **{f"{STUDY['run_name']}/{mid}": cfg for mid, cfg in STUDY["models"].items()},
}
#: the sections of a heads config each job reads (its params.heads: an edit of one of them, and
#: only that, reruns it)
HEADS_SECTIONS = {
    "train": ("corpus", "model", "train"),
    "measure": ("corpus", "model", "train", "measure"),
    "predict": ("corpus", "model", "train", "measure", "predict"),
    "report": ("measure",),
}


wildcard_constraints:
    hrun="|".join(re.escape(r) for r in HEADS_RUNS) or "(?!)",


rule heads:
    """The exploratory heads run: the per-head table, the figures and the summary."""
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
    """Train a heads model on its corpus; its weights and the training curve."""
    input:
        code=package_code(
            "heads/corpus", "heads/dedup", "heads/model", "heads/train", "heads/stage"
        ),
    output:
        model="results/{hrun}/model.pt",
        curve="results/{hrun}/tables/training_curve.csv",
    log:
        "results/{hrun}/logs/heads_train.log",
    benchmark:
        "results/{hrun}/benchmarks/heads_train.tsv"
    conda:
        "../../envs/compute.yaml"
    threads: heads_threads
    resources:
        mem_mb=by_attempt(4000),
        runtime=runtime_by_attempt(60),
    params:
        heads=heads_cfg("train"),
    script:
        "../scripts/heads_train.py"


rule heads_measure:
    """Every head: its truncation knee (every loss per window) and the ranks of its spectra."""
    input:
        model="results/{hrun}/model.pt",
        code=package_code(
            *(
                f"heads/{m}"
                for m in (
                    "corpus",
                    "dedup",
                    "model",
                    "stage",
                    "capture",
                    "knees",
                    "ranks",
                )
            ),
            "heads/measure",
            "predict/attention",
            "predict/base",
            "core/estimators",
        ),
    output:
        table="results/{hrun}/tables/heads.csv",
        curves="results/{hrun}/tables/knee_curves.csv",
        windows="results/{hrun}/tables/knee_windows.parquet",
    log:
        "results/{hrun}/logs/heads_measure.log",
    benchmark:
        "results/{hrun}/benchmarks/heads_measure.tsv"
    conda:
        "../../envs/compute.yaml"
    threads: heads_threads
    resources:
        mem_mb=by_attempt(4000),
        runtime=runtime_by_attempt(60),
    params:
        heads=heads_cfg("measure"),
    script:
        "../scripts/heads_measure.py"


rule heads_predict:
    """entropic-bound predict's recommendation on each selected head's captured X, Y."""
    input:
        model="results/{hrun}/model.pt",
        code=package_code(
            "heads/predicted",
            "heads/capture",
            "heads/measure",
            "heads/stage",
            "predict",
        ),
    output:
        table="results/{hrun}/tables/predict.csv",
    log:
        "results/{hrun}/logs/heads_predict.log",
    benchmark:
        "results/{hrun}/benchmarks/heads_predict.tsv"
    conda:
        "../../envs/compute.yaml"
    threads: heads_threads
    resources:
        mem_mb=by_attempt(6000),
        runtime=runtime_by_attempt(60),  # doubled on a retry; the first ask fits MaxTime = 60
    params:
        heads=heads_cfg("predict"),
    script:
        "../scripts/heads_predict.py"


rule heads_report:
    """Which estimator names the knee against the nulls, the knee's reliability, the figures,
    the summary page."""
    input:
        model="results/{hrun}/model.pt",
        table="results/{hrun}/tables/heads.csv",
        curves="results/{hrun}/tables/knee_curves.csv",
        windows="results/{hrun}/tables/knee_windows.parquet",
        predict="results/{hrun}/tables/predict.csv",
        curve="results/{hrun}/tables/training_curve.csv",
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
        agreement="results/{hrun}/tables/estimators.csv",
        reliability="results/{hrun}/tables/knee_reliability.csv",
        sensitivity="results/{hrun}/tables/knee_sensitivity.csv",
        md="results/{hrun}/heads.md",
        png="results/{hrun}/figures/H1_knees.png",
        pdf="results/{hrun}/figures/H1_knees.pdf",
        curve_png="results/{hrun}/figures/H2_training_curve.png",
        curve_pdf="results/{hrun}/figures/H2_training_curve.pdf",
    log:
        "results/{hrun}/logs/heads_report.log",
    localrule: True
    conda:
        "../../envs/heads_report.yaml"
    params:
        heads=heads_cfg("report"),
    script:
        "../scripts/heads_report.py"


rule heads_study:
    """The registered study: the verdict table of registration H1 and what it rests on."""
    input:
        md=f"{STUDY_DIR}/study.md",
        verdicts=f"{STUDY_DIR}/verdicts.csv",
    log:
        f"{STUDY_DIR}/logs/heads_study.log",
    localrule: True
    conda:
        "../../envs/compute.yaml"
    shell:
        "cat {input.md} | tee {log}"


rule heads_study_verdicts:
    """Every model's heads in one table, the registration's verdicts, the estimators against
    the nulls, the anchor's comparison, the cost."""
    input:
        tables=study_model_files("table"),
        windows=study_model_files("windows"),
        registration=STUDY.get("registration_path", []),
        code=package_code(
            *(
                f"heads/{m}"
                for m in (
                    "study",
                    "claims",
                    "reliability",
                    "baselines",
                    "stats",
                    "report",
                )
            ),
            "core/estimators",
            "analysis/columns",
        ),
    output:
        verdicts=f"{STUDY_DIR}/verdicts.csv",
        heads=f"{STUDY_DIR}/tables/heads.csv",
        estimators=f"{STUDY_DIR}/tables/estimators.csv",
        anchor=f"{STUDY_DIR}/tables/anchor.csv",
        cost=f"{STUDY_DIR}/tables/cost.csv",
        md=f"{STUDY_DIR}/study.md",
    log:
        f"{STUDY_DIR}/logs/heads_study_verdicts.log",
    localrule: True
    conda:
        "../../envs/compute.yaml"
    params:
        study=STUDY,
        run_dir=study_dir_of,
        benchmarks=study_benchmarks("cost"),
    script:
        "../scripts/heads_study.py"


rule heads_study_predict:
    """entropic-bound predict (causal) on every head of the study's models, beside the knee:
    its own target, outside the study's budget (minutes of CPU a head at d_model 64)."""
    input:
        tables=study_model_files("table"),
        windows=study_model_files("windows"),
        predict=study_model_files("predict"),
        registration=PREDICT_REGISTRATION or [],
        code=package_code(
            "heads/study",
            "heads/report",
            "heads/baselines",
            "heads/stats",
            "heads/promises",
            "predict/words",
        ),
    output:
        predict=f"{STUDY_DIR}/tables/predict.csv",
        estimators=f"{STUDY_DIR}/tables/predict_estimators.csv",
        promises=f"{STUDY_DIR}/tables/promises.csv",
        separation=f"{STUDY_DIR}/tables/separation.csv",
        verdicts=f"{STUDY_DIR}/predict_verdicts.csv",
        md=f"{STUDY_DIR}/predict.md",
    log:
        f"{STUDY_DIR}/logs/heads_study_predict.log",
    localrule: True
    conda:
        "../../envs/compute.yaml"
    params:
        study=STUDY,
        run_dir=study_dir_of,
        benchmarks=study_benchmarks("predict"),
        registration=PREDICT_CLAIMS,
    script:
        "../scripts/heads_study_predict.py"
