# Analyses, claims, figures and tables: everything here reads cached tables only (no tasks,
# no training), so `snakemake figures` after a plotting change reruns plots and nothing else.

#: figure id -> file stem under figures/ (SCIENCE.md §6)
FIGURES = {
    "F1": "F1_deficiency",
    "F2": "F2_recovery",
    "F3": "F3_naive_transfer",
    "F4": "F4_ladder",
    "F5": "F5_estimators",
    "F6": "F6_frontier",
    "F7": "F7_prediction_vs_knee",
}
TABLES = f"{RUN}/tables"
#: library code whose edits must redo its outputs (Snakemake tracks only the thin scripts)
CODE = repo_path("src/entropic_bound")


FIGURE_FILES = [
    f"{RUN}/figures/{stem}.{ext}" for stem in FIGURES.values() for ext in ("png", "pdf")
]
#: the analyses' own tables, read by the figures
INTERMEDIATE_TABLES = [
    f"{TABLES}/{name}.csv"
    for name in ("risk_curves", "rank_dynamics", "learned_ranks", "ladder")
]
#: the headline outputs: claims (T1), tables T2-T4 and figures F1-F7 (see get_final_output)
ANALYSIS_OUTPUTS = [
    f"{TABLES}/claims.csv",
    f"{RUN}/claims.md",
    f"{TABLES}/T2_intrinsic_ranks.csv",
    f"{TABLES}/T3_estimators.csv",
    f"{TABLES}/T4_frontier.csv",
    *FIGURE_FILES,
]


rule analyses:
    """Risk curves, knees, static students, learned ranks, rank dynamics, the ladder, T2, T3."""
    input:
        predictions=f"{TABLES}/data_only_predictions.csv",
        metrics=f"{TABLES}/train_metrics.parquet",
        dynamics=f"{TABLES}/train_dynamics.parquet",
        code=f"{CODE}/analysis.py",
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
        claims=CLAIMS,
    script:
        "../scripts/analyses.py"


rule frontier_table:
    """T4: exact rate per cell of the predictability frontier."""
    input:
        frontier=f"{TABLES}/frontier.csv",
        code=f"{CODE}/analysis.py",
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
        code=[f"{CODE}/claims.py", f"{CODE}/analysis.py"],
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
        risk_curves=f"{TABLES}/risk_curves.csv",
        rank_dynamics=f"{TABLES}/rank_dynamics.csv",
        ladder=f"{TABLES}/ladder.csv",
        train_metrics=f"{TABLES}/train_metrics.parquet",
        T2_intrinsic_ranks=f"{TABLES}/T2_intrinsic_ranks.csv",
        T3_estimators=f"{TABLES}/T3_estimators.csv",
        code=f"{CODE}/plotting.py",
    output:
        # F1: deficiency and achievability, R against rank with the tail-energy overlay
        F1_png=report(f"{RUN}/figures/{FIGURES['F1']}.png", **REPORT["F1"]),
        F1_pdf=f"{RUN}/figures/{FIGURES['F1']}.pdf",
        # F2: recovery, learned spectra of full-rank students and their rank over training
        F2_png=report(f"{RUN}/figures/{FIGURES['F2']}.png", **REPORT["F2"]),
        F2_pdf=f"{RUN}/figures/{FIGURES['F2']}.pdf",
        # F3: naive transfer, P_static against r* per rung and the static students' risk
        F3_png=report(f"{RUN}/figures/{FIGURES['F3']}.png", **REPORT["F3"]),
        F3_pdf=f"{RUN}/figures/{FIGURES['F3']}.pdf",
        # F4: the ladder L0 -> L1 -> L2 -> L-lambda -> L4, where the static picture breaks
        F4_png=report(f"{RUN}/figures/{FIGURES['F4']}.png", **REPORT["F4"]),
        F4_pdf=f"{RUN}/figures/{FIGURES['F4']}.pdf",
        # F5: estimator robustness, mean absolute error per estimator, linear vs softmax
        F5_png=report(f"{RUN}/figures/{FIGURES['F5']}.png", **REPORT["F5"]),
        F5_pdf=f"{RUN}/figures/{FIGURES['F5']}.pdf",
        # F7: data-only predictions against the trained knee on every task
        F7_png=report(f"{RUN}/figures/{FIGURES['F7']}.png", **REPORT["F7"]),
        F7_pdf=f"{RUN}/figures/{FIGURES['F7']}.pdf",
    log:
        f"{RUN}/logs/plot_figures.log",
    localrule: True
    conda:
        "../../envs/plot.yaml"
    params:
        figures=[f for f in FIGURES if f != "F6"],
        claims=CLAIMS,
    script:
        "../scripts/plot.py"


rule plot_frontier:
    """F6 on its own: it needs no training, so it is drawn even when a training job fails."""
    input:
        T4_frontier=f"{TABLES}/T4_frontier.csv",
        code=f"{CODE}/plotting.py",
    output:
        # F6: the data-only predictability frontier as exact-recovery heatmaps
        F6_png=report(f"{RUN}/figures/{FIGURES['F6']}.png", **REPORT["F6"]),
        F6_pdf=f"{RUN}/figures/{FIGURES['F6']}.pdf",
    log:
        f"{RUN}/logs/plot_frontier.log",
    localrule: True
    conda:
        "../../envs/plot.yaml"
    params:
        figures=["F6"],
        claims=CLAIMS,
    script:
        "../scripts/plot.py"


rule figures:
    """Every figure and table, rebuilt from cached tables only (no task or training job)."""
    input:
        ANALYSIS_OUTPUTS,
    localrule: True
