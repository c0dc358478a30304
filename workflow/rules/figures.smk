# Figures (src/entropic_bound/figures/): every rule input, output and report entry here is
# built from the figure's FigureSpec (figures/spec.py: stem, tables, rule, category, caption),
# through the functions of common.smk.
FIGURE_FILES = [
    f"{RUN}/figures/{f.stem}.{ext}" for f in FIGURES.values() for ext in ("png", "pdf")
]
#: the headline outputs: claims (T1, v4 line by line) and their controls, tables T2-T4, figures F1-F7, and the exploratory
#: tables X1-X3 and figures X1, X3 (see get_final_output)
ANALYSIS_OUTPUTS = [
    f"{TABLES}/claims.csv",
    f"{TABLES}/subclaims.csv",
    f"{RUN}/claims.md",
    f"{TABLES}/controls.csv",
    f"{TABLES}/T2_intrinsic_ranks.csv",
    f"{TABLES}/T3_estimators.csv",
    f"{TABLES}/T4_frontier.csv",
    f"{TABLES}/X1_boundaries.csv",
    f"{TABLES}/X1_teachers.csv",
    f"{TABLES}/X2_c8_by_beta.csv",
    f"{TABLES}/X3_floor_aware.csv",
    *FIGURE_FILES,
]


rule plot_figures:
    """F1-F5 and F7 (PNG and PDF), one job: the plotting imports cost more than the drawing."""
    input:
        **figure_inputs("plot_figures"),
        code=package_code("figures"),
    output:
        **figure_outputs("plot_figures"),
    log:
        f"{RUN}/logs/plot_figures.log",
    localrule: True
    conda:
        "../../envs/plot.yaml"
    params:
        figures=figures_of_rule("plot_figures"),
        claims=CLAIMS,
    script:
        "../scripts/plot.py"


rule plot_frontier:
    """F6, X1 and X3: they need no training, so they are drawn even when a training job fails."""
    input:
        **figure_inputs("plot_frontier"),
        code=package_code("figures"),
    output:
        **figure_outputs("plot_frontier"),
    log:
        f"{RUN}/logs/plot_frontier.log",
    localrule: True
    conda:
        "../../envs/plot.yaml"
    params:
        figures=figures_of_rule("plot_frontier"),
        claims=CLAIMS,
    script:
        "../scripts/plot.py"


rule figures:
    """Every figure and table, rebuilt from cached tables only (no task or training job)."""
    input:
        ANALYSIS_OUTPUTS,
    localrule: True


# `make figures`: every figure and table of the paper from the shipped reference, with no run
#: the shipped reference of the paper run: its tables and every table a figure reads
#: (benchmarks/make_reference.py)
REFERENCE = "benchmarks/reference/paper"
REFERENCE_FIGURES = "results/reference_figures"
#: the paper's tables: T1 (claims), T2-T4 and the exploratory X1-X3
PAPER_TABLES = [Path(p).stem for p in ANALYSIS_OUTPUTS if p.endswith(".csv")]
#: the rules below: they read the shipped reference, no run
REFERENCE_RULES = ("reference_figures", "plot_reference", "reference_table")


rule reference_figures:
    """Every figure and table of the paper from the shipped reference (`make figures`)."""
    input:
        **reference_figure_outputs(),
        tables=expand(f"{REFERENCE_FIGURES}/tables/{{table}}.csv", table=PAPER_TABLES),
    localrule: True


rule plot_reference:
    """Every figure from the shipped reference's tables: the drawing of plot_figures and
    plot_frontier, no run needed."""
    input:
        **reference_figure_inputs(),
        code=package_code("figures"),
    output:
        **reference_figure_outputs(),
    log:
        f"{REFERENCE_FIGURES}/logs/plot_reference.log",
    localrule: True
    conda:
        "../../envs/plot.yaml"
    params:
        figures=list(FIGURES),
        claims=CLAIMS,
        stamp={"tables": REFERENCE},
    script:
        "../scripts/plot.py"


rule reference_table:
    """A paper table of the shipped reference, decompressed (the reference's bytes)."""
    input:
        repo_path(f"{REFERENCE}/{{table}}.csv.gz"),
    output:
        f"{REFERENCE_FIGURES}/tables/{{table}}.csv",
    log:
        f"{REFERENCE_FIGURES}/logs/reference_table_{{table}}.log",
    localrule: True
    conda:
        "../../envs/plot.yaml"
    shell:
        "gzip -dc {input} > {output} 2> {log}"
