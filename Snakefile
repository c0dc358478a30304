# entropic-bound: reproducibility pipeline for arXiv 2607.23050 (see README.md).
# A table of contents: the config (validated in common.smk), one include per stage, the final target.
from pathlib import Path

from snakemake.utils import min_version

min_version("9.0")


# Every repository path goes through the Snakefile's own directory, so the workflow runs from any
# working directory (`snakemake -s <clone>/Snakefile -d /scratch/run`) and as a `module`.
#: the clone's root (this file's directory), whatever the working directory
EB_ROOT = Path(workflow.current_basedir.get_path_or_uri(False))


configfile: EB_ROOT / "config" / "config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/tasks.smk"
include: "workflow/rules/bounds.smk"
include: "workflow/rules/predict.smk"
include: "workflow/rules/frontier.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/analysis.smk"
include: "workflow/rules/claims.smk"
include: "workflow/rules/figures.smk"
include: "workflow/rules/exploratory.smk"
include: "workflow/rules/heads.smk"
include: "workflow/rules/pretrained.smk"
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


onsuccess:
    clear_partial_claims()


onerror:
    write_partial_claims()
