"""The heads study's config (config/heads.yaml; docs/method.md §9): read strictly, validated by
``schemas/heads.schema.yaml`` (defaults filled in) and by the cross-key rules below, before any
job of ``snakemake heads``. Its own file, not a section of the pipeline config: the paper run
never reads it, and a broken heads config never stops a paper run (:func:`heads_asked`).
"""

from __future__ import annotations

import copy
import re

from entropic_bound.config.load import ConfigError, read_config, validate
from entropic_bound.config.relations import _keys
from entropic_bound.core.causal import rows_needed

#: the pipeline config's key naming the heads config (default config/heads.yaml)
HEADS_CONFIG_KEY = "heads_config"
#: the rules of the study (workflow/rules/heads.smk)
HEADS_RULES = ("heads", "heads_train", "heads_measure", "heads_predict", "heads_report")
#: a path under results/heads*/ (relative or absolute): a target of the study
_UNDER_RESULTS_HEADS = re.compile(r"(^|/)results/heads[^/]*(/|$)")


def load_heads_config(path) -> dict:
    """``path`` read strictly and validated: the heads config with its defaults filled in."""
    label = f"heads config {path}"
    try:
        doc = read_config(path)
    except ConfigError as exc:
        raise ConfigError(str(exc).replace("config file", "heads config", 1)) from None
    try:
        cfg = copy.deepcopy(validate(doc, "heads"))  # not the schema's default lists
    except ConfigError as exc:
        raise ConfigError(str(exc).replace("heads key", f"{label}: key", 1)) from None
    try:
        check_heads_relations(cfg)
    except ConfigError as exc:
        raise ConfigError(f"{label}: {exc}") from None
    return cfg


def load_heads_claims(path) -> dict:
    """The heads study's registration (config/heads_claims.yaml; docs/method.md §9b), read
    strictly and validated by ``schemas/heads_claims.schema.yaml``."""
    return _registration(path, "heads_claims", "heads registration")


def _registration(path, schema: str, noun: str) -> dict:
    """A registration file read strictly and validated by ``schemas/<schema>.schema.yaml``; an
    error is one line naming ``noun``, the file and the key."""
    try:
        doc = read_config(path)
    except ConfigError as exc:
        raise ConfigError(str(exc).replace("config file", noun, 1)) from None
    try:
        return copy.deepcopy(validate(doc, schema))
    except ConfigError as exc:
        raise ConfigError(str(exc).replace(f"{schema} key", f"{noun} {path}: key", 1)) from None


#: the pipeline config's key naming a registration of predict on a study's heads (§9f)
PREDICT_CLAIMS_KEY = "predict_registration"


def load_predict_claims(path) -> dict:
    """A registration of ``predict`` on a heads study's heads (docs/method.md §9f), read strictly
    and validated by ``schemas/predict_claims.schema.yaml``."""
    return _registration(path, "predict_claims", "predict registration")


def check_heads_relations(cfg: dict) -> None:
    """Rules between keys of a schema-valid heads config; each error names every key."""
    t, m = cfg["train"], cfg["measure"]
    if t["warmup"] >= t["steps"]:
        raise ConfigError(
            f"keys {_keys('train.warmup', 'train.steps')}: a warm-up of {t['warmup']} steps "
            f"leaves none of the {t['steps']} to train at full rate; use warmup < steps"
        )
    if t["eval_every"] > t["steps"]:
        raise ConfigError(
            f"keys {_keys('train.eval_every', 'train.steps')}: eval_every = {t['eval_every']} > "
            f"steps = {t['steps']} leaves a curve of two points; use eval_every ≤ steps"
        )
    if t["plateau_window"] and t["schedule"] != "constant":
        raise ConfigError(
            f"keys {_keys('train.plateau_window', 'train.schedule')}: the plateau rule stops "
            "where the validation curve flattens, which reads as convergence only at a fixed "
            f"learning rate (a {t['schedule']} rate flattens it by decaying); use "
            "schedule: constant, or plateau_window: 0"
        )
    if 0 < t["plateau_window"] < t["eval_every"]:
        raise ConfigError(
            f"keys {_keys('train.plateau_window', 'train.eval_every')}: a plateau window of "
            f"{t['plateau_window']} steps holds no evaluation (one every {t['eval_every']}); "
            "use plateau_window ≥ eval_every"
        )
    d_model = cfg["model"]["heads"] * cfg["model"]["d_head"]
    if d_model < 2:  # a one-dimensional residual stream has no kernel to truncate
        raise ConfigError(
            f"keys {_keys('model.heads', 'model.d_head')}: d_model = heads · d_head = 1; "
            "use d_model ≥ 2"
        )
    p = cfg["predict"]
    if p["sequences"] > m["capture_sequences"]:
        raise ConfigError(
            f"keys {_keys('predict.sequences', 'measure.capture_sequences')}: predict reads "
            f"the first {p['sequences']} capture windows of {m['capture_sequences']}; use "
            "predict.sequences ≤ measure.capture_sequences"
        )
    d_head = cfg["model"]["d_head"]
    need = rows_needed(d_model, d_head)
    rows = p["sequences"] * cfg["model"]["context"]
    if p["heads"] != "none" and p["causal"] and rows < need:
        raise ConfigError(
            f"keys {_keys('predict.sequences', 'model.context')}: the causal P_attn fits "
            f"d_model² + 2·d_model·d_head unknowns from {d_head} values a row and needs "
            f"{need} rows (sequences · context), got {rows}; raise predict.sequences"
        )
    if sorted(m["taus"]) != m["taus"]:
        raise ConfigError(f"key 'measure.taus': list τ in increasing order, got {m['taus']}")


def heads_asked(argv: list[str], cfg: dict) -> bool:
    """Whether a Snakemake invocation may run the heads study, and so must check its config at
    parse time: a ``heads_config`` in the pipeline config, or a word of the command line that is
    a heads rule or a path under ``results/heads*/`` (Snakemake knows its targets only after the
    parse, so this reads the words; a clone whose own path holds "heads" does not count)."""
    if HEADS_CONFIG_KEY in cfg:
        return True
    words = [a for a in argv[1:] if not a.startswith("-")]
    return any(w in HEADS_RULES or _UNDER_RESULTS_HEADS.search(w) for w in words)
