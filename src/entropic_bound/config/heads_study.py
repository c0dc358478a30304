"""The registered heads study's config (config/heads_study.yaml; docs/method.md §9c): cells ×
seeds of heads models, each a full heads config (``common`` with its cell's overrides), read
strictly and checked whole before any job of ``snakemake heads_study``: every model's config by
the heads schema and rules (:func:`.heads.load_heads_config`'s checks), and every model against
the registration it is run for (config/heads_claims.yaml): the measurement protocol it fixed,
the estimates its tests read.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path

from entropic_bound.config.heads import check_heads_relations, load_heads_claims
from entropic_bound.config.load import ConfigError, merged, read_config, validate

#: the pipeline config's key naming the study's config (default config/heads_study.yaml)
STUDY_CONFIG_KEY = "heads_study_config"
#: the study's own rules (workflow/rules/heads.smk); its models run the heads rules
STUDY_RULES = ("heads_study", "heads_study_verdicts", "heads_study_predict")
#: the pipeline config's key that sets every study model's ``predict.heads`` (``all`` or
#: ``none``): predict on the study's heads is its own target, run on a study already decided
#: without editing the study's committed config (its verdicts do not read predict)
PREDICT_HEADS_KEY = "heads_predict"


def load_heads_study(path, root=None, predict_heads: str | None = None) -> dict:
    """The study of ``path``: ``{run_name, registration (the loaded registration),
    registration_path, seeds, cells (cell -> overrides), models (model id -> heads config),
    cell_of (model id -> cell)}``; the registration's path is read relative to ``root`` (the
    clone) unless absolute. ``predict_heads`` (``all`` or ``none``), when given, replaces every
    model's ``predict.heads`` (:data:`PREDICT_HEADS_KEY`)."""
    if predict_heads is not None and predict_heads not in ("all", "none"):
        raise ConfigError(
            f"--config {PREDICT_HEADS_KEY}={predict_heads!r}: give all or none "
            "(a list of heads belongs in the study's predict.heads)"
        )
    label = f"heads study {path}"
    try:
        doc = read_config(path)
    except ConfigError as exc:
        raise ConfigError(str(exc).replace("config file", "heads study", 1)) from None
    try:
        study = copy.deepcopy(validate(doc, "heads_study"))
    except ConfigError as exc:
        raise ConfigError(str(exc).replace("heads_study key", f"{label}: key", 1)) from None
    reg_path = Path(study["registration"])
    if not reg_path.is_absolute() and root is not None:
        reg_path = Path(root) / reg_path
    registration = load_heads_claims(reg_path)
    models, cell_of = {}, {}
    for cell, overrides in study["cells"].items():
        for seed in study["seeds"]:
            model_id = f"{cell}_s{seed}"
            cfg = _model_config(study, cell, overrides, seed, label, predict_heads)
            check_protocol(cfg, registration, f"{label}: cell {cell!r}")
            models[model_id], cell_of[model_id] = cfg, cell
    return study | {
        "registration": registration,
        "registration_path": str(reg_path),
        "models": models,
        "cell_of": cell_of,
    }


def _model_config(
    study: dict, cell: str, overrides: dict, seed: int, label: str, predict_heads: str | None
) -> dict:
    """One model's heads config: ``common`` with the cell's overrides (and ``predict_heads``),
    validated."""
    doc = merged(copy.deepcopy(study["common"]), copy.deepcopy(overrides))
    if predict_heads is not None:
        doc.setdefault("predict", {})["heads"] = predict_heads
    doc |= {
        "run_name": f"{study['run_name']}_{cell}_s{seed}",
        "seed": seed,
        "device": study["device"],
        "threads": study["threads"],
    }
    where = f"{label}: cell {cell!r}"
    try:
        cfg = copy.deepcopy(validate(doc, "heads"))
        check_heads_relations(cfg)
    except ConfigError as exc:
        raise ConfigError(f"{where}: {str(exc).replace('heads key', 'key', 1)}") from None
    return cfg


def check_protocol(cfg: dict, registration: dict, where: str) -> None:
    """A model must measure as the registration fixed (its ``protocol``) and compute every
    estimate a registered test reads (its r_E(τ) among ``measure.taus``; predict's rank run on
    every head)."""
    for key, want in registration["protocol"].items():
        got = cfg["measure"][key]
        if got != want:
            raise ConfigError(
                f"{where}: key 'measure.{key}' is {got}, the registration fixed {want}; "
                "measure as registered (or register again)"
            )
    tests = [*registration["names_the_knee"].values(), *registration["orders_the_heads"].values()]
    for spec in tests:
        column = spec["column"]
        if column == "predict_rank" and cfg["predict"]["heads"] != "all":
            raise ConfigError(
                f"{where}: a registered test reads predict_rank; set predict.heads: all"
            )
        tau = re.fullmatch(r"[a-z]+_energy_([0-9.]+)", column)
        if tau and float(tau.group(1)) not in cfg["measure"]["taus"]:
            raise ConfigError(
                f"{where}: a registered test reads {column}; add {tau.group(1)} to measure.taus"
            )


def study_asked(argv: list[str], cfg: dict) -> bool:
    """Whether a Snakemake invocation may run the study (its config must then be checked at
    parse time): a ``heads_study_config`` in the pipeline config, or a word of the command line
    naming a study rule or a path under ``results/heads_study*/``."""
    if STUDY_CONFIG_KEY in cfg:
        return True
    words = [a for a in argv[1:] if not a.startswith("-")]
    return any(w in STUDY_RULES or re.search(r"(^|/)results/heads_study", w) for w in words)
