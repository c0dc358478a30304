# Claims (src/entropic_bound/claims/: one module per claim): the verdict of every claim from
# cached tables, with the thresholds of config/claims.yaml.


rule controls:
    """Every check of every registration on a planted true and a planted false input
    (docs/method.md §5c): no run data, so it runs beside the pipeline from the start."""
    input:
        code=package_code("claims", "analysis"),
    output:
        report(f"{TABLES}/controls.csv", **REPORT["controls"]),
    log:
        f"{RUN}/logs/controls.log",
    benchmark:
        f"{RUN}/benchmarks/controls.tsv"
    conda:
        "../../envs/compute.yaml"
    resources:
        # fabricated tables of 12 tasks a rung: ~0.3 GB, ~40 s on one core (no run data)
        mem_mb=by_attempt(1000),
        runtime=runtime_by_attempt(10),
    params:
        claims=CLAIMS,
    script:
        "../scripts/controls.py"


rule claims:
    """T1: the verdict of every claim C1-C9 under registrations v1, v2, v3 and v4
    (config/claims.yaml; v4 sub-claim by sub-claim in subclaims.csv), and the controls table in
    claims.md."""
    input:
        controls=f"{TABLES}/controls.csv",
        data_only_predictions=f"{TABLES}/data_only_predictions.csv",
        frontier=f"{TABLES}/frontier.csv",
        train_metrics=f"{TABLES}/train_metrics.parquet",
        X1_boundaries=f"{TABLES}/X1_boundaries.csv",
        X2_c8_by_beta=f"{TABLES}/X2_c8_by_beta.csv",
        X1_teachers=f"{TABLES}/X1_teachers.csv",
        C8_distortion=DISTORTION_TABLE,
        bounds=f"{TABLES}/bounds.csv",
        code=package_code("claims", "analysis", "exploratory/beyond"),
    output:
        csv=report(f"{TABLES}/claims.csv", **REPORT["T1"]),
        subclaims=f"{TABLES}/subclaims.csv",
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
