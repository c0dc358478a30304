# The data-only predictors (src/entropic_bound/predict/): P_static with its static-fit share and
# P_attn on every task, no training, as one job for every task where one tasks job makes them all
# (the paper run's 12 s job), else one job per random stream (r*, seed), the tasks that share
# their inputs X (PREDICT_PARTS in common.smk; tasks/grid.py): each job factorises its X once
# for all its rungs, beside the others (d = 64: one 20-min job became six), and rule predict
# merges their spectra, bitwise the one job's, in the run's task order (predict/tables.py).


rule predict_part:
    """The spectra of P_static (with its static-fit share) and P_attn on the tasks of one job
    (PREDICT_PARTS): each task's clean and noisy copies, one row per (task, σ, predictor).
    """
    input:
        predict_part_task_files,
    output:
        # the spectra, and the stream's Σ xᵀx for the static rungs' best bounds (STREAM_GRAMS)
        predict_part_outputs("{part}"),
    log:
        f"{RUN}/logs/predict/{{part}}.log",
    benchmark:
        f"{RUN}/benchmarks/predict/{{part}}.tsv"
    # early, beside the long frontier jobs: left to the end it delays the claims by its length
    priority: 1
    conda:
        "../../envs/compute.yaml"
    threads: config["threads"]
    resources:
        mem_mb=by_attempt(predict_mem_mb()),
        runtime=runtime_by_attempt(predict_runtime(len(PREDICT_PARTS))),
    params:
        reads=reads("predict"),
    script:
        "../scripts/predict_part.py"


rule predict:
    """Data-only predictors (P_static with its static-fit share, P_attn) on every task: their
    estimates (the table) and the spectra they were read from (X3's ladder reads P_attn's),
    merged from the predict jobs in the run's task order.
    """
    input:
        expand("{run}/predict_parts/{part}.parquet", run=RUN, part=PREDICT_PARTS),
    output:
        table=f"{RUN}/tables/data_only_predictions.csv",
        spectra=PREDICT_SPECTRA,
    log:
        f"{RUN}/logs/predict.log",
    benchmark:
        f"{RUN}/benchmarks/predict.tsv"
    priority: 1
    localrule: True
    conda:
        "../../envs/compute.yaml"
    params:
        reads=reads("predict"),
        task_ids=[t.task_id for t in TASKS],
    script:
        "../scripts/predict.py"
