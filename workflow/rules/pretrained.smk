# Pretrained heads (config/pretrained_heads.yaml; src/entropic_bound/pretrained/), not part of
# reproduce-all. `snakemake pretrained_capture` captures every model of the config on its
# corpus: one `entropic-bound heads` per model (docs/cli.md), each writing
# results/<run_name>/<model>/capture/ (layer_<l>.npz, windows.npz, manifest.json). It measures
# nothing. The config is checked at parse time only when its target may run
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
