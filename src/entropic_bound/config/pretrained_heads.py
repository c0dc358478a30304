"""The pretrained heads' capture config (config/pretrained_heads.yaml): read strictly and
validated by ``schemas/pretrained_heads.schema.yaml`` before any job of ``snakemake
pretrained_capture``. Its own file: the paper run never reads it, and a broken one never stops
a paper run (:func:`pretrained_asked`)."""

from __future__ import annotations

import copy
import os
import re
from pathlib import Path

from entropic_bound.config.load import ConfigError, read_config, validate

#: the pipeline config's key naming this config (default config/pretrained_heads.yaml)
PRETRAINED_CONFIG_KEY = "pretrained_heads_config"
#: the environment variable of the models' folder when the config's models_dir is ""
MODELS_DIR_VARIABLE = "ENTROPIC_BOUND_PRETRAINED_DIR"
#: the rules of the capture and the study (workflow/rules/pretrained.smk)
PRETRAINED_RULES = (
    "pretrained_capture",
    "pretrained_heads",
    "pretrained_measure",
    "pretrained_study",
)
_UNDER_RESULTS = re.compile(r"(^|/)results/pretrained_heads[^/]*(/|$)")


def load_pretrained_heads(path, environ=None) -> dict:
    """``path`` read strictly and validated, with ``models_dir`` resolved (an empty one from
    $ENTROPIC_BOUND_PRETRAINED_DIR of ``environ``, default the process's)."""
    label = f"pretrained heads config {path}"
    try:
        doc = read_config(path)
    except ConfigError as exc:
        raise ConfigError(str(exc).replace("config file", label, 1)) from None
    try:
        cfg = copy.deepcopy(validate(doc, "pretrained_heads"))
    except ConfigError as exc:
        raise ConfigError(str(exc).replace("pretrained_heads key", f"{label}: key", 1)) from None
    for model in cfg["models"].values():  # defaults under additionalProperties are not filled
        model.setdefault("layers", "all")
    environ = os.environ if environ is None else environ
    root = cfg["models_dir"] or environ.get(MODELS_DIR_VARIABLE, "")
    if not root:
        raise ConfigError(
            f"{label}: key 'models_dir' is empty and {MODELS_DIR_VARIABLE} is not set; name the "
            "folder of the unpacked models in one of them"
        )
    cfg["models_dir"] = str(Path(root).absolute())
    return cfg


def pretrained_asked(argv: list[str], cfg: dict) -> bool:
    """Whether a Snakemake invocation may run the capture, and so must check its config at
    parse time: a ``pretrained_heads_config`` in the pipeline config, or a word of the command
    line that is one of its rules or a path under ``results/pretrained_heads*/``."""
    if PRETRAINED_CONFIG_KEY in cfg:
        return True
    words = [a for a in argv[1:] if not a.startswith("-")]
    return any(w in PRETRAINED_RULES or _UNDER_RESULTS.search(w) for w in words)
