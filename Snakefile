# entropic-bound: reproducibility pipeline for arXiv 2607.23050 (see README.md).
# A table of contents: config validation, one include per stage, the final target.
from snakemake.utils import min_version, validate

min_version("9.0")


configfile: "config/config.yaml"


validate(config, schema="workflow/schemas/config.schema.yaml")


include: "workflow/rules/common.smk"
include: "workflow/rules/tasks.smk"
include: "workflow/rules/predict.smk"
include: "workflow/rules/frontier.smk"
include: "workflow/rules/train.smk"


rule:
    name:
        "reproduce-all"
    default_target: True
    input:
        get_final_output(),
