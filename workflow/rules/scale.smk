# Verdict by scale (SCIENCE.md §8, exploratory: no verdict of its own). `snakemake scale` runs
# the normal pipeline (reproduce-all) once per config of config/scale/scales.yaml, each into its
# own results/<run_name>/ (an existing run is reused: its targets are up to date), then writes
# results/scale/: every claim's verdict and headline margin against d (src/entropic_bound/scale.py).
from entropic_bound.scale import load_scales  # noqa: E402

SCALE_LIST = config.get("scale_list", "config/scale/scales.yaml")
SCALES = {s["d"]: s for s in load_scales(SCALE_LIST)}
SCALE_DIR = "results/scale"


def scale_config(wildcards):
    return SCALES[int(wildcards.d)]["config"]


def scale_run_dir(wildcards):
    cfg = yaml.safe_load(Path(scale_config(wildcards)).read_text())
    return f"results/{cfg['run_name']}"


rule scale:
    """The verdict-by-scale table and figure for every d of config/scale/scales.yaml."""
    input:
        f"{SCALE_DIR}/verdict_by_scale.csv",
        f"{SCALE_DIR}/verdict_by_scale.md",
        f"{SCALE_DIR}/figures/verdict_by_scale.png",
    log:
        f"{SCALE_DIR}/logs/scale.log",
    localrule: True
    shell:
        "cat {input[1]} | tee {log}"


rule scale_run:
    """One scale: reproduce-all with that scale's config (the normal pipeline, nothing else)."""
    input:
        scale_config,
    output:
        f"{SCALE_DIR}/runs/d{{d}}.run",
    log:
        f"{SCALE_DIR}/logs/run_d{{d}}.log",
    threads: workflow.cores
    params:
        run_dir=scale_run_dir,
        snakemake=f"{sys.executable} -m snakemake",
    shell:
        "{params.snakemake} reproduce-all --configfile {input} --cores {threads} --nolock "
        "> {log} 2>&1 && echo {params.run_dir} > {output}"


rule scale_table:
    """Claim × d: each run's verdict and headline number, as a table and a figure."""
    input:
        runs=expand(f"{SCALE_DIR}/runs/d{{d}}.run", d=sorted(SCALES)),
        code=f"{CODE}/scale.py",
    output:
        csv=report(
            f"{SCALE_DIR}/verdict_by_scale.csv",
            caption="../report/scale.rst",
            category="Verdict by scale (exploratory)",
        ),
        md=f"{SCALE_DIR}/verdict_by_scale.md",
        png=report(
            f"{SCALE_DIR}/figures/verdict_by_scale.png",
            caption="../report/scale.rst",
            category="Verdict by scale (exploratory)",
        ),
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
