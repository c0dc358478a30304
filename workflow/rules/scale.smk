# Verdict by scale (docs/method.md §8, exploratory: no verdict of its own). `snakemake scale` builds
# the normal pipeline (reproduce-all's files) once per config of config/scale/scales.yaml, each into
# its own results/<run_name>/, then writes results/scale/: every claim's verdict and headline
# margin against d (src/entropic_bound/exploratory/scale.py).
#
# Each scale's run is made of jobs of this workflow, which a profile schedules like any other
# (`--profile profiles/slurm` submits them): this Snakefile as a module with that scale's config,
# its rules imported as scale_d<d>_<rule> (scale_d8_tasks, scale_d8_train, ...). The same rules
# write the same files as `snakemake reproduce-all --configfile <config>`, so an existing run is
# reused (its files are up to date). The scale whose config is this invocation's own (d = 16 in
# `snakemake scale`) is built by the workflow's own rules (tasks, train, ...).

#: the rules a scale's module leaves out: they write no run (the studies', the shipped
#: reference's, the pretrained models' captures), so each of them would be a second rule for one
#: file
NOT_RUN_RULES = (
    *SCALE_RULES,
    *HEADS_RULES,
    *STUDY_RULES,
    *REFERENCE_RULES,
    *PRETRAINED_RULES,
)

for _d, _scale in sorted(SCALES.items()):
    if _scale["own"]:
        continue
    # `module scale_d<d>: snakefile: ...; config: ...` and `use rule * from scale_d<d> exclude
    # ... as scale_d<d>_*`, which the grammar wants with literal names: one per listed d
    workflow.module(
        name=scale_module(_d),
        snakefile=str(EB_ROOT / "Snakefile"),
        config=_scale["values"],
    )
    workflow.userule(
        rules=["*"],
        from_module=scale_module(_d),
        exclude_rules=list(NOT_RUN_RULES),
        name_modifier=f"{scale_module(_d)}_*",
    )(lambda: None)


rule scale:
    """The verdict-by-scale table and figure for every d of config/scale/scales.yaml."""
    input:
        csv=f"{SCALE_DIR}/verdict_by_scale.csv",
        md=f"{SCALE_DIR}/verdict_by_scale.md",
        png=f"{SCALE_DIR}/figures/verdict_by_scale.png",
    log:
        f"{SCALE_DIR}/logs/scale.log",
    localrule: True
    conda:
        "../../envs/compute.yaml"
    shell:
        "cat {input.md} | tee {log}"


rule scale_table:
    """Claim × d: each run's verdict and headline number, as a table and a figure."""
    input:
        runs=scale_run_files,
        code=package_code("exploratory/scale"),
    output:
        csv=report(f"{SCALE_DIR}/verdict_by_scale.csv", **REPORT["scale"]),
        md=f"{SCALE_DIR}/verdict_by_scale.md",
        png=report(f"{SCALE_DIR}/figures/verdict_by_scale.png", **REPORT["scale"]),
        pdf=f"{SCALE_DIR}/figures/verdict_by_scale.pdf",
    log:
        f"{SCALE_DIR}/logs/scale_table.log",
    localrule: True
    conda:
        "../../envs/plot.yaml"
    params:
        claims=CLAIMS,
        scales=sorted(SCALES),
        runs=[f"results/{SCALES[d]['run_name']}" for d in sorted(SCALES)],
    script:
        "../scripts/scale_table.py"
