"""The registered heads study (docs/method.md §9c; rules ``heads_study_verdicts``,
``heads_study_predicted``): every model's measured heads in one table, the registration's
verdicts (:mod:`.claims`), the estimators against the nulls, the anchor's comparison, the cost;
apart, predict beside the knee (its causal fit costs minutes a head at d_model 64, so it is its
own target, outside the study's budget).

Each model (a cell × seed of config/heads_study.yaml) was trained, measured and predicted by the
heads rules into ``results/<study>/<cell>_s<seed>/``; this module only reads their tables.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from entropic_bound.core.io import read_table
from entropic_bound.heads.claims import eligible, evaluate, verdict_markdown
from entropic_bound.heads.reliability import reliability
from entropic_bound.heads.report import agreement, baseline_markdown, markdown_table
from entropic_bound.heads.stats import stratified_spearman

#: the files of one model the study reads, under its directory
MODEL_FILES = {
    "table": "tables/heads.csv",
    "windows": "tables/knee_windows.parquet",
    "predict": "tables/predict.csv",
    "curve": "tables/training_curve.csv",
}
#: the study config's keys its tables' provenance stamps (the config hash names them)
STAMPED = ("run_name", "seeds", "cells", "common", "registration")
#: the jobs whose Snakemake benchmark files give the study's cost, and predict's
COST_JOBS = ("heads_train", "heads_measure")
PREDICT_JOBS = ("heads_predict",)


def model_heads(
    model_id: str, cell: str, cfg: dict, directory, with_predict: bool = False
) -> pd.DataFrame:
    """One model's heads: its table, the knee's reliability read from its per-window losses,
    (``with_predict``) predict's rank, and who it is (model, cell, seed, corpus source)."""
    d = Path(directory)
    table = read_table(d / MODEL_FILES["table"])
    rel = reliability(read_table(d / MODEL_FILES["windows"]), cfg["measure"], cfg["seed"])
    table = table.merge(rel.drop(columns="knee"), on=["layer", "head"], how="left")
    if with_predict:
        table = table.merge(
            read_table(d / MODEL_FILES["predict"]), on=["layer", "head"], how="left"
        )
    who = {"model": model_id, "cell": cell, "seed": cfg["seed"], "source": cfg["corpus"]["source"]}
    return table.assign(**who)[[*who, *table.columns]]


def study_heads(study: dict, run_dir, with_predict: bool = False) -> pd.DataFrame:
    """Every head of every model of ``study`` (:func:`.config.heads_study.load_heads_study`),
    read from ``run_dir``/<model id>/, with the registration's eligibility (and predict's rank)."""
    parts = [
        model_heads(mid, study["cell_of"][mid], cfg, Path(run_dir) / mid, with_predict)
        for mid, cfg in study["models"].items()
    ]
    heads = pd.concat(parts, ignore_index=True)
    heads["eligible"] = eligible(heads, study["registration"])
    return heads


def anchor_table(heads: pd.DataFrame) -> pd.DataFrame:
    """The anchor's comparison by cell (arXiv 2604.04384: the logit field at 90 % in 2–11
    components, the learned W_Qᵀ W_K in 38–75 of d_h ∈ {64, 128}, so the kernel's rank far above
    the field's, more so as d_h grows): per cell, d_head, heads, the medians and ranges of both
    r_E(0.9), and the share of heads whose kernel rank is above the field's."""
    rows = []
    for cell, g in heads.groupby("cell", sort=False):
        qk, field = g["qk_energy_0.9"], g["logit_energy_0.9"]
        rows.append(
            {
                "cell": cell,
                "d_head": int(g["d_head"].iloc[0]),
                "heads": len(g),
                "qk_median": float(qk.median()),
                "qk_range": f"{qk.min():g}–{qk.max():g}",
                "logit_median": float(field.median()),
                "logit_range": f"{field.min():g}–{field.max():g}",
                "kernel_above_field": float((qk > field).mean()),
                "knee_median": float(g["knee"].median()),
            }
        )
    return pd.DataFrame(rows)


def predict_table(heads: pd.DataFrame) -> pd.DataFrame:
    """Predict's rank beside the knee, head by head (the heads where it ran)."""
    if "predict_rank" not in heads.columns:
        return pd.DataFrame()
    cols = ["model", "cell", "layer", "head", "d_head", "knee", "knee_resolved", "eligible"]
    cols += [c for c in ("knee_inputs_metric",) if c in heads.columns]
    cols += [c for c in heads.columns if c.startswith("predict_")]
    return heads.loc[heads["predict_rank"].notna(), cols].reset_index(drop=True)


def cost_table(benchmarks: dict[str, dict[str, str]]) -> pd.DataFrame:
    """CPU seconds, wall seconds and peak memory of every job of every model, from Snakemake's
    benchmark files (``{model: {job: path}}``; a missing file is a NaN row)."""
    rows = []
    for model, jobs in benchmarks.items():
        for job, path in jobs.items():
            row = {
                "model": model,
                "job": job,
                "cpu_s": np.nan,
                "wall_s": np.nan,
                "max_rss_mb": np.nan,
            }
            if Path(path).exists():
                b = pd.read_csv(path, sep="\t").iloc[-1]
                row |= {"cpu_s": float(b["cpu_time"]), "wall_s": float(b["s"])}
                row["max_rss_mb"] = float(b["max_rss"]) if b["max_rss"] != "-" else np.nan
            rows.append(row)
    return pd.DataFrame(rows)


def within_layers(heads: pd.DataFrame, reg: dict, seed: int = 0) -> pd.DataFrame:
    """Each registered ordering test read again with the knees permuted within each model ×
    layer cell instead of within each model (exploratory, beside the verdict, which stays as
    registered): knee and estimator can both follow the layer, and heads of a layer share
    their inputs, so what survives this null orders heads beyond their layer."""
    keep = eligible(heads, reg)
    rows = []
    for test_id, spec in reg["orders_the_heads"].items():
        sub = heads[keep]
        sub = sub[sub.groupby("model")["knee"].transform("size") >= spec["min_heads_per_model"]]
        args = (sub[spec["column"]].fillna(-np.inf), sub["knee"], sub["model"])
        kw = {"permutations": spec["permutations"], "seed": seed}
        kw["min_size"] = spec["min_heads_per_model"]
        rho, p_model, _ = stratified_spearman(*args, **kw)
        _, p_layer, _ = stratified_spearman(*args, **kw, within=sub["layer"])
        rows.append(
            {"claim": test_id, "column": spec["column"], "heads": len(sub), "rho": rho}
            | {"p_within_model": p_model, "p_within_layer": p_layer}
        )
    return pd.DataFrame(rows)


def study_markdown(
    study: dict,
    verdicts: pd.DataFrame,
    agree: pd.DataFrame,
    anchor: pd.DataFrame,
    cost: pd.DataFrame,
    layers: pd.DataFrame | None = None,
) -> str:
    """The study's page: the verdict table first, whatever it says, then what it rests on."""
    reg = study["registration"]
    heads = int(verdicts.loc[verdicts["claim"] == "eligibility", "heads"].iloc[0])
    cpu_min = cost["cpu_s"].sum() / 60 if len(cost) else float("nan")
    lines = [
        f"# Real heads, decided: registration {reg.get('name', 'H1')} "
        f"({reg['registered']}; docs/method.md §9b)",
        "",
        f"{len(study['models'])} models ({', '.join(study['cells'])} × seeds "
        f"{', '.join(map(str, study['seeds']))}), {heads} heads; cost {cpu_min:.1f} CPU-min "
        "(the jobs' Snakemake benchmarks).",
        "",
        verdict_markdown(verdicts),
        "",
        "## Every estimator against the nulls (eligible heads)",
        "",
        baseline_markdown(agree, "eligible" if "eligible" in set(agree["set"]) else "with_knee"),
        "",
        "## The anchor's comparison (reported, not registered)",
        "",
        markdown_table(anchor),
        "",
    ]
    if layers is not None and len(layers):
        lines += [
            "## The ordering tests with knees permuted within each layer (exploratory)",
            "",
            markdown_table(layers),
            "",
        ]
    return "\n".join(lines) + "\n"


def predict_markdown(predict: pd.DataFrame, agree: pd.DataFrame, cost: pd.DataFrame) -> str:
    """Predict's page: its rank against the knee and the nulls, then head by head."""
    shown = ["model", "layer", "head", "knee", "eligible", "predict_rank"]
    shown += ["predict_predictor", "predict_estimator", "predict_confidence", "predict_cpu_s"]
    rows = agree[agree["spectrum"].isin(["predict", "null"])]
    cpu = cost["cpu_s"].sum() / 60 if len(cost) else float("nan")
    head_set = "eligible" if "eligible" in set(rows["set"]) else "with_knee"
    return "\n".join(
        [
            "# entropic-bound predict on the study's heads (docs/method.md §9c, item (e))",
            "",
            f"{len(predict)} heads, {cpu:.1f} CPU-min (the predict jobs' benchmarks).",
            "",
            baseline_markdown(rows, head_set),
            "",
            markdown_table(predict[shown]) if len(predict) else "(no head predicted)",
            "",
        ]
    )


def decide(study: dict, run_dir) -> dict:
    """Everything the verdict rule writes: heads, verdicts, estimators, anchor."""
    heads = study_heads(study, run_dir)
    taus = next(iter(study["models"].values()))["measure"]["taus"]
    return {
        "heads": heads,
        "verdicts": evaluate(heads, study["registration"], seed=min(study["seeds"])),
        "estimators": agreement(heads, taus, model="model"),
        "anchor": anchor_table(heads),
        "within_layers": within_layers(heads, study["registration"], seed=min(study["seeds"])),
    }


def predicted(study: dict, run_dir) -> dict:
    """What the predict rule writes: predict's rank beside the knee, against the nulls."""
    heads = study_heads(study, run_dir, with_predict=True)
    taus = next(iter(study["models"].values()))["measure"]["taus"]
    return {"predict": predict_table(heads), "estimators": agreement(heads, taus, model="model")}
