# Pretrained heads (config/pretrained_heads.yaml; src/entropic_bound/pretrained/), not part of
# reproduce-all. `snakemake pretrained_capture` captures every model of the config on its
# corpus: one `entropic-bound heads` per model (docs/cli.md), each writing
# results/<run_name>/<model>/capture/ (layer_<l>.npz, windows.npz, manifest.json).
# `snakemake pretrained_study` then measures every head of each capture (pretrained_measure:
# knees, estimators, predict) and evaluates registration H3 on them (pretrained_study:
# verdicts, per-model tables, the figure, report.md; docs/method.md §9e). The config is checked at parse time only when its target may run
# (src/entropic_bound/config/pretrained_heads.py). The jobs need the `pretrained` extra
# (tokenizers, gguf), outside the lock: envs/pretrained.yaml pins it at its tested versions
# (with --use-conda); otherwise they run in the invoking environment.
import re

from entropic_bound.config.pretrained_heads import (  # noqa: E402
    PRETRAINED_CONFIG_KEY,
    PRETRAINED_RULES,
    load_pretrained_heads,
    pretrained_asked,
)

PRETRAINED_CONFIG = in_clone(
    config.get(PRETRAINED_CONFIG_KEY, "config/pretrained_heads.yaml")
)
PRETRAINED = (
    config_or_exit(load_pretrained_heads, PRETRAINED_CONFIG)
    if pretrained_asked(sys.argv, config)
    else {"run_name": "pretrained_heads", "models": {}, "threads": 1}
)
PRETRAINED_DIR = f"results/{PRETRAINED['run_name']}"


wildcard_constraints:
    pmodel="|".join(re.escape(m) for m in PRETRAINED["models"]) or "(?!)",


rule pretrained_capture:
    """Every pretrained model of the config captured."""
    input:
        expand(f"{PRETRAINED_DIR}/{{pmodel}}/capture", pmodel=PRETRAINED["models"]),
    log:
        f"{PRETRAINED_DIR}/logs/pretrained_capture.log",
    localrule: True
    conda:
        "../../envs/compute.yaml"
    shell:
        "ls -l {input} | tee {log}"


rule pretrained_study:
    """Registration H3's verdicts on every measured model, the tables, the figure, the report."""
    input:
        heads=expand(
            f"{PRETRAINED_DIR}/{{pmodel}}/heads.csv", pmodel=PRETRAINED["models"]
        ),
        registration=lambda w: in_clone(PRETRAINED.get("registration", "")),
        code=package_code(
            "pretrained/h3", "pretrained/study", "pretrained/figure", "heads/stats"
        ),
    output:
        heads=f"{PRETRAINED_DIR}/heads.csv",
        verdicts=f"{PRETRAINED_DIR}/verdicts.csv",
        knees=f"{PRETRAINED_DIR}/knees.csv",
        compression=f"{PRETRAINED_DIR}/compression.csv",
        words=f"{PRETRAINED_DIR}/words.csv",
        figure=f"{PRETRAINED_DIR}/pretrained_knees.png",
        report=f"{PRETRAINED_DIR}/report.md",
        sums=f"{PRETRAINED_DIR}/SHA256SUMS",
    log:
        f"{PRETRAINED_DIR}/logs/pretrained_study.log",
    conda:
        "../../envs/compute.yaml"
    resources:
        mem_mb=by_attempt(2000),
        runtime=runtime_by_attempt(10),
    params:
        cfg=lambda w: {k: v for k, v in PRETRAINED.items() if k != "models"},
        models=PRETRAINED["models"],
        model_names=list(PRETRAINED["models"]),
    script:
        "../scripts/pretrained_study.py"


rule pretrained_measure:
    """Every head of one model's capture: knees under both truncations, estimators, predict."""
    input:
        capture=f"{PRETRAINED_DIR}/{{pmodel}}/capture",
        code=package_code(
            "pretrained/knee",
            "pretrained/measure",
            "predict",
            "core/estimators",
        ),
    output:
        heads=f"{PRETRAINED_DIR}/{{pmodel}}/heads.csv",
        curves=f"{PRETRAINED_DIR}/{{pmodel}}/curves.csv",
        stamp=f"{PRETRAINED_DIR}/{{pmodel}}/provenance.json",
    log:
        f"{PRETRAINED_DIR}/{{pmodel}}/logs/pretrained_measure.log",
    benchmark:
        f"{PRETRAINED_DIR}/{{pmodel}}/benchmarks/pretrained_measure.tsv"
    conda:
        "../../envs/compute.yaml"
    threads: PRETRAINED["threads"]
    resources:
        mem_mb=by_attempt(4000),
        runtime=runtime_by_attempt(60),
    params:
        cfg=lambda w: {k: v for k, v in PRETRAINED.items() if k != "models"},
        tolerance=0.01,
    script:
        "../scripts/pretrained_measure.py"


rule pretrained_heads:
    """One model's X, Y and query/key maps per layer on the corpus (entropic-bound heads)."""
    input:
        model=lambda w: f"{PRETRAINED['models_dir']}/{w.pmodel}/{PRETRAINED['models'][w.pmodel]['file']}",
        code=package_code("pretrained", "cli/capture"),
    output:
        capture=directory(f"{PRETRAINED_DIR}/{{pmodel}}/capture"),
    log:
        f"{PRETRAINED_DIR}/{{pmodel}}/logs/pretrained_heads.log",
    benchmark:
        f"{PRETRAINED_DIR}/{{pmodel}}/benchmarks/pretrained_heads.tsv"
    conda:
        "../../envs/pretrained.yaml"
    threads: PRETRAINED["threads"]
    resources:
        mem_mb=by_attempt(4000),
        runtime=runtime_by_attempt(30),
    params:
        cfg=lambda w: {k: v for k, v in PRETRAINED.items() if k != "models"},
        model=lambda w: PRETRAINED["models"][w.pmodel],
    script:
        "../scripts/pretrained_heads.py"
