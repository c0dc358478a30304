# entropic-bound: reproducibility pipeline for arXiv 2607.23050 (see README.md).
# A table of contents: config validation, one include per stage, the final target.
from snakemake.utils import min_version, validate

min_version("9.0")


configfile: "config/config.yaml"


validate(config, schema="workflow/schemas/config.schema.yaml")


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/tasks.smk"
include: "workflow/rules/predict.smk"
include: "workflow/rules/frontier.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/analysis.smk"
include: "workflow/rules/provenance.smk"
include: "workflow/rules/scale.smk"


rule:
    name:
        "reproduce-all"
    default_target: True
    input:
        get_final_output(),
        claims_md=f"{RUN}/claims.md",
    log:
        f"{RUN}/logs/reproduce-all.log",
    localrule: True
    conda:
        "envs/compute.yaml"
    shell:
        "cat {input.claims_md} | tee {log}"


onerror:
    write_partial_claims()
