# Analyses (src/entropic_bound/analysis/): knees, static students, learned ranks, the ladder
# and tables T2-T4, from cached tables only (no tasks, no training).
TABLES = f"{RUN}/tables"
#: the analyses' own tables, read by the figures
INTERMEDIATE_TABLES = [
    f"{TABLES}/{name}.csv"
    for name in ("risk_curves", "rank_dynamics", "learned_ranks", "ladder")
]


rule analyses:
    """Risk curves, knees, static students, learned ranks, rank dynamics, the ladder, T2, T3."""
    input:
        predictions=f"{TABLES}/data_only_predictions.csv",
        metrics=f"{TABLES}/train_metrics.parquet",
        dynamics=f"{TABLES}/train_dynamics.parquet",
        code=package_code("analysis"),
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
        code=package_code("analysis"),
    output:
        report(f"{TABLES}/T4_frontier.csv", **REPORT["T4"]),
    log:
        f"{RUN}/logs/frontier_table.log",
    localrule: True
    conda:
        "../../envs/compute.yaml"
    script:
        "../scripts/frontier_table.py"
