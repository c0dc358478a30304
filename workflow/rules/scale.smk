# Verdict by scale (docs/method.md §8, exploratory: no verdict of its own). `snakemake scale` runs
# the normal pipeline (reproduce-all) once per config of config/scale/scales.yaml, each into its
# own results/<run_name>/ (an existing run is reused: its targets are up to date), then writes
# results/scale/: every claim's verdict and headline margin against d (src/entropic_bound/scale.py).
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


rule scale_run:
    """One scale: reproduce-all with that scale's config (the normal pipeline, nothing else)."""
    input:
        scale_config,
    output:
        f"{SCALE_DIR}/runs/d{{d}}.run",
    log:
        f"{SCALE_DIR}/logs/run_d{{d}}.log",
    localrule: True  # a driver: the inner run's jobs are the work
    conda:
        "../../envs/compute.yaml"
    threads: 1024  # every core: Snakemake caps a job's threads at --cores
    params:
        run_dir=scale_run_dir,
        snakemake=f"{sys.executable} -m snakemake",
        snakefile=workflow.main_snakefile,
    shell:
        "{params.snakemake} -s {params.snakefile} reproduce-all --configfile {input} --cores {threads} --nolock "
        "> {log} 2>&1 && mkdir -p $(dirname {output}) && echo {params.run_dir} > {output}"


rule scale_table:
    """Claim × d: each run's verdict and headline number, as a table and a figure."""
    input:
        runs=expand(f"{SCALE_DIR}/runs/d{{d}}.run", d=sorted(SCALES)),
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
    script:
        "../scripts/scale_table.py"
