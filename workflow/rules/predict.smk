rule predict:
    """Data-only predictors (P_static with its static-fit share, P_attn) on every task: their
    estimates (the table) and the spectra they were read from (X3's ladder reads P_attn's).
    """
    input:
        all_task_files(),
    output:
        table=f"{RUN}/tables/data_only_predictions.csv",
        spectra=PREDICT_SPECTRA,
    log:
        f"{RUN}/logs/predict.log",
    benchmark:
        f"{RUN}/benchmarks/predict.tsv"
    # early, beside the long frontier jobs: left to the end it delays the claims by its length
    priority: 1
    conda:
        "../../envs/compute.yaml"
    threads: config["threads"]
    resources:
        mem_mb=by_attempt(predict_mem_mb()),
        runtime=runtime_by_attempt(predict_runtime()),
    params:
        reads=reads("predict"),
    script:
        "../scripts/predict.py"
