# Analyses, claims, figures and tables: everything here reads cached tables only (no tasks,
# no training), so `snakemake figures` after a plotting change reruns plots and nothing else.
# Figures come from one registry (src/entropic_bound/figure_registry.py), read through the
# input/output functions of workflow/rules/figures.smk.
TABLES = f"{RUN}/tables"
#: library code whose edits must redo its outputs (Snakemake tracks only the thin scripts)
CODE = repo_path("src/entropic_bound")
#: the library modules that draw the figures
PLOT_CODE = [
    f"{CODE}/{m}.py"
    for m in ("plotting", "plot_style", "figures_training", "figures_data")
]

#: the library modules of the analyses
ANALYSIS_CODE = [
    f"{CODE}/{m}.py"
    for m in ("analysis", "analysis_common", "analysis_students", "analysis_tables")
]
#: the library modules that give the verdicts (and the analyses and X2 they read)
CLAIMS_CODE = [
    f"{CODE}/{m}.py"
    for m in (
        "claims",
        "claims_base",
        "claims_static",
        "claims_attention",
        "claims_report",
        "beyond",
    )
] + ANALYSIS_CODE

FIGURE_FILES = [
    f"{RUN}/figures/{f.stem}.{ext}" for f in FIGURES.values() for ext in ("png", "pdf")
]
#: the analyses' own tables, read by the figures
INTERMEDIATE_TABLES = [
    f"{TABLES}/{name}.csv"
    for name in ("risk_curves", "rank_dynamics", "learned_ranks", "ladder")
]
#: the headline outputs: claims (T1), tables T2-T4, figures F1-F7, and the exploratory
#: tables X1, X2 and figure X1 (see get_final_output)
ANALYSIS_OUTPUTS = [
    f"{TABLES}/claims.csv",
    f"{RUN}/claims.md",
    f"{TABLES}/T2_intrinsic_ranks.csv",
    f"{TABLES}/T3_estimators.csv",
    f"{TABLES}/T4_frontier.csv",
    f"{TABLES}/X1_boundaries.csv",
    f"{TABLES}/X2_c8_by_beta.csv",
    *FIGURE_FILES,
]


rule analyses:
    """Risk curves, knees, static students, learned ranks, rank dynamics, the ladder, T2, T3."""
    input:
        predictions=f"{TABLES}/data_only_predictions.csv",
        metrics=f"{TABLES}/train_metrics.parquet",
        dynamics=f"{TABLES}/train_dynamics.parquet",
        code=ANALYSIS_CODE,
    output:
        risk_curves=f"{TABLES}/risk_curves.csv",
        rank_dynamics=f"{TABLES}/rank_dynamics.csv",
        learned_ranks=f"{TABLES}/learned_ranks.csv",
        ladder=f"{TABLES}/ladder.csv",
        T2_intrinsic_ranks=report(f"{TABLES}/T2_intrinsic_ranks.csv", **REPORT["T2"]),
        T3_estimators=report(f"{TABLES}/T3_estimators.csv", **REPORT["T3"]),
    log:
        f"{RUN}/logs/analyses.log",
    localrule: True
    conda:
        "../../envs/compute.yaml"
    params:
        reads=reads("analyses"),
        claims=CLAIMS,
    script:
        "../scripts/analyses.py"


rule frontier_table:
    """T4: exact rate per cell of the predictability frontier."""
    input:
        frontier=f"{TABLES}/frontier.csv",
        code=ANALYSIS_CODE,
    output:
        report(f"{TABLES}/T4_frontier.csv", **REPORT["T4"]),
    log:
        f"{RUN}/logs/frontier_table.log",
    localrule: True
    conda:
        "../../envs/compute.yaml"
    script:
        "../scripts/frontier_table.py"


rule claims:
    """T1: the verdict of every claim C1-C9 (thresholds: config/claims.yaml)."""
    input:
        data_only_predictions=f"{TABLES}/data_only_predictions.csv",
        frontier=f"{TABLES}/frontier.csv",
        train_metrics=f"{TABLES}/train_metrics.parquet",
        X1_boundaries=f"{TABLES}/X1_boundaries.csv",
        X2_c8_by_beta=f"{TABLES}/X2_c8_by_beta.csv",
        code=CLAIMS_CODE,
    output:
        csv=report(f"{TABLES}/claims.csv", **REPORT["T1"]),
        md=report(f"{RUN}/claims.md", **REPORT["claims_md"]),
    log:
        f"{RUN}/logs/claims.log",
    localrule: True
    conda:
        "../../envs/compute.yaml"
    params:
        claims=CLAIMS,
    script:
        "../scripts/claims.py"


rule plot_figures:
    """F1-F5 and F7 (PNG and PDF), one job: the plotting imports cost more than the drawing."""
    input:
        **figure_inputs("plot_figures"),
        code=PLOT_CODE,
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
    """F6 and X1: they need no training, so they are drawn even when a training job fails."""
    input:
        **figure_inputs("plot_frontier"),
        code=PLOT_CODE,
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
