"""Configuration: load strictly, validate, hash (no Snakemake imports).

A config is checked in four passes, each error one line that names the key (or both keys):

1. the file itself (:mod:`strict_yaml`): no duplicate keys, bounded alias expansion;
2. every number finite (YAML's ``.nan``/``.inf`` pass a JSON schema's ``minimum``);
3. the JSON schema of ``schemas/<name>.schema.yaml`` (package data, so an installed package
   validates without the repository), whose ``default`` values are filled in as Snakemake's
   ``validate`` did;
4. the rules that tie keys together (:func:`.relations.check_relations`): what would otherwise pass a
   dry run and fail inside a job, or run and mislead.

``snakemake -n`` runs all four (``workflow/rules/common.smk``), so a bad config stops before
any job, and before anything is written under ``results/``.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
import math
import re
from importlib import resources
from pathlib import Path

from entropic_bound.config.relations import ConfigError, check_relations
from entropic_bound.config.strict_yaml import MAX_VALUES, StrictYAMLError, read_strict

REPO = Path(__file__).resolve().parents[3]


@functools.cache
def load_schema(name: str) -> dict:
    """The JSON schema ``name`` (``config`` or ``claims``), read from the package data."""
    import yaml

    text = resources.files("entropic_bound.config").joinpath("schemas", f"{name}.schema.yaml")
    return yaml.safe_load(text.read_text(encoding="utf-8"))


def _dotted(path) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "<top level>"


def check_finite(cfg, label: str = "config", max_values: int = MAX_VALUES) -> None:
    """Every number in ``cfg`` (nested dicts and lists) finite, and at most ``max_values``
    values in all (a dict built in Python can share sub-lists as an alias bomb does)."""
    seen = 0
    stack = [((), cfg)]
    while stack:
        path, value = stack.pop()
        seen += 1
        if seen > max_values:
            raise ConfigError(f"{label} holds more than {max_values} values; is it the right file?")
        if isinstance(value, float) and not math.isfinite(value):
            raise ConfigError(
                f"{label} key '{_dotted(path)}' is {value}; every number must be finite"
            )
        if isinstance(value, dict):
            stack.extend(((*path, k), v) for k, v in reversed(list(value.items())))
        elif isinstance(value, list):
            stack.extend(((*path, i), v) for i, v in reversed(list(enumerate(value))))


def _schema_error(e, label: str) -> ConfigError:
    """One line from a jsonschema error: the key, then the schema's ``x-message`` if it has
    one, else jsonschema's message cut short (it can hold the repr of a whole list)."""
    message = e.schema.get("x-message") if isinstance(e.schema, dict) else None
    if not message:
        message = " ".join(e.message.split())
        if len(message) > 200:
            message = message[:197] + "..."
    return ConfigError(f"{label} key '{_dotted(e.absolute_path)}': {message}")


def _fill_defaults(cfg, sub: dict) -> None:
    """Set each missing key that has a schema ``default`` (what Snakemake's validate did)."""
    if not isinstance(cfg, dict):
        return
    for key, prop in sub.get("properties", {}).items():
        if key not in cfg and "default" in prop:
            cfg[key] = copy.deepcopy(prop["default"])  # never the cached schema's own object
        if key in cfg:
            _fill_defaults(cfg[key], prop)


@functools.cache
def _validator_class():
    """Draft 2020-12 with ``integer`` meaning a Python int. The draft counts 8.0 as an integer
    (a float with no fractional part), which then reaches ``range``, slicing and tensor shapes
    as a float (a traceback at parse time, or task files named ``L0_r1.0_s0``)."""
    from jsonschema import Draft202012Validator, validators

    def is_integer(checker, value) -> bool:
        return isinstance(value, int) and not isinstance(value, bool)

    checker = Draft202012Validator.TYPE_CHECKER.redefine("integer", is_integer)
    return validators.extend(Draft202012Validator, type_checker=checker)


def validate(cfg: dict, schema: str = "config") -> dict:
    """Raise ConfigError naming the first offending key, else return ``cfg`` with its schema
    defaults filled in. ``schema`` is ``config`` (pipeline), ``claims`` (thresholds) or
    ``scales`` (the scale list's form; :func:`load_scale_list` checks the rest)."""
    if not isinstance(cfg, dict):
        raise ConfigError(f"{schema} must be a mapping of keys, not {type(cfg).__name__}")
    check_finite(cfg, schema)
    spec = load_schema(schema)
    errors = sorted(
        _validator_class()(spec).iter_errors(cfg),
        key=lambda e: [str(p) for p in e.absolute_path],
    )
    if errors:
        raise _schema_error(errors[0], schema)
    _fill_defaults(cfg, spec)
    if schema == "config":
        check_relations(cfg)
    elif schema == "claims":
        from entropic_bound.config.claims import check_claims_relations

        check_claims_relations(cfg)
    return cfg


def validate_config(cfg: dict) -> dict:
    """:func:`validate` of a pipeline config (a dict, e.g. Snakemake's ``config``)."""
    return validate(cfg, "config")


def read_config(path) -> dict:
    """Read ``path`` strictly (:mod:`strict_yaml`): a mapping, not yet validated."""
    try:
        cfg = read_strict(path)
    except StrictYAMLError as exc:
        raise ConfigError(str(exc)) from None
    if not isinstance(cfg, dict):
        raise ConfigError(f"config file {path} must hold a mapping of keys")
    return cfg


def load_config(path, schema: str = "config", base=None) -> dict:
    """Read ``path`` strictly (:mod:`strict_yaml`) and :func:`validate` it.

    A pipeline config that lacks top-level keys the schema requires is an overlay (what the
    README tells users to write for ``--configfile my.yaml``): it is merged over ``base``
    (default: this clone's config/config.yaml, the Snakefile's configfile), as Snakemake merges
    it, and the result validated (:func:`load_run_config`). Without a base to merge over (an
    installed wheel has no config/config.yaml), one line says how to pass one."""
    cfg = read_config(path)
    if schema != "config":
        return validate(cfg, schema)
    missing = [k for k in load_schema("config").get("required", []) if k not in cfg]
    if not missing and base is None:
        return validate(cfg, schema)
    base = REPO / "config" / "config.yaml" if base is None else Path(base)
    if not base.is_file():
        raise ConfigError(
            f"config file {path} is an overlay (it lacks {', '.join(missing)}) and there is no "
            f"config to merge it over ({base} does not exist); pass the full config as "
            "load_config(path, base='path/to/config/config.yaml')"
        )
    return validate(merged(read_config(base), cfg), schema)


def merged(base: dict, over: dict) -> dict:
    """``over`` on ``base`` key by key, recursively: what Snakemake does with --configfile."""
    out = dict(base)
    for key, value in over.items():
        both = isinstance(value, dict) and isinstance(base.get(key), dict)
        out[key] = merged(base[key], value) if both else value
    return out


def load_run_config(path, base=None) -> dict:
    """A config as a run of the workflow sees it: ``base`` (default: this clone's
    config/config.yaml, the Snakefile's configfile), then ``path`` over it, validated."""
    base = REPO / "config" / "config.yaml" if base is None else base
    return validate(merged(read_config(base), read_config(path)))


def check_workflow_config(cfg: dict, configfiles, claims_path, overrides=None) -> dict:
    """What the Snakefile runs before any rule: re-read every config file Snakemake merged
    into ``cfg`` strictly (Snakemake's own reader accepts duplicate keys and alias bombs),
    type the nested ``--config`` values (``overrides``; :mod:`.overrides`), validate the merged
    ``cfg`` in place, and return the validated claims thresholds."""
    from entropic_bound.config.overrides import typed_overrides

    for path in configfiles:
        try:
            read_strict(path)
        except StrictYAMLError as exc:
            raise ConfigError(str(exc)) from None
    typed_overrides(cfg, overrides or {})
    validate(cfg, "config")
    claims = load_config(claims_path, "claims")
    from entropic_bound.config.claims import check_claims_estimators

    check_claims_estimators(cfg, claims)
    return claims


#: a word of a command line that names the scale study (:func:`scale_study_asked`): one of its
#: rules (``scale``, ``scale_table``), a rule of one scale's run (``scale_d<d>_<rule>``, also as a
#: cluster job's ``--target-jobs`` word, wildcards after a colon), either with the prefix a module
#: of this workflow adds (``eb_scale``), or a path under results/scale/
_SCALE_WORD = re.compile(r"(^|_)scale(_table)?(:|$)|(^|_)scale_d\d+_|(^|/)results/scale/")


def scale_study_asked(argv: list[str], cfg: dict) -> bool:
    """Whether a Snakemake invocation may run the scale study, and so must check the scale
    list whole at parse time and declare its runs: a ``scale_list`` in its config, or a word of
    its command line ``argv`` naming the study (``_SCALE_WORD``). Snakemake knows its targets only
    after the parse, so this reads the words; a clone whose own path holds "scale" does not
    count (every job's command line names the Snakefile)."""
    if "scale_list" in cfg:
        return True
    words = [a for a in argv[1:] if not a.startswith("-")]
    return any(_SCALE_WORD.search(w) for w in words)


#: the keys of a pipeline config that name another study's file, not a setting of its run
STUDY_KEYS = ("scale_list", "heads_config", "heads_study_config", "predict_registration")


def run_settings(cfg: dict) -> dict:
    """``cfg`` without :data:`STUDY_KEYS`: what decides the run results/<run_name>/."""
    return {k: v for k, v in cfg.items() if k not in STUDY_KEYS}


def load_scale_list(
    path, resolve=Path, base=None, claims: dict | None = None, own: dict | None = None
) -> list[dict]:
    """``snakemake scale``'s list (config/scale/scales.yaml), checked whole before any job:
    its form (schema ``scales``), no d twice, every listed config valid as its run will see
    it (``base``, default this clone's config/config.yaml, then the file over it; with
    ``claims``, also against the claims thresholds, :func:`check_claims_estimators`), listed
    under its own ``task.d``, and no two configs writing one ``results/<run_name>/`` (their
    runs would go at once into one directory). ``own`` is the config of the invocation that
    runs the study: a listed config with its run_name must be that config (its run's jobs are
    the invocation's own), else both would write one ``results/<run_name>/``. ``resolve`` maps a
    listed path to a file. Returns ``[{d, config, run_name, values, own}]`` sorted by d,
    ``config`` resolved, ``values`` the validated config, ``own`` whether it is ``own``'s run."""
    label = f"scale list {path}"
    try:
        doc = read_config(path)
    except ConfigError as exc:  # "config file <path> ...": the file is the scale list
        raise ConfigError(str(exc).replace("config file", "scale list", 1)) from None
    try:
        doc = validate(doc, "scales")
    except ConfigError as exc:
        raise ConfigError(str(exc).replace("scales key", f"{label}: key", 1)) from None
    scales = doc["scales"]
    first: dict[int, int] = {}
    for i, s in enumerate(scales):
        if s["d"] in first:
            raise ConfigError(
                f"{label}: d = {s['d']} is listed twice (scales[{first[s['d']]}] and "
                f"scales[{i}]); keep one"
            )
        first[s["d"]] = i
    out, runs = [], {}
    for i, s in enumerate(scales):
        config = resolve(s["config"])
        where = f"{label}: scales[{i}] (d = {s['d']}, {s['config']})"
        try:
            cfg = load_run_config(config, base)
            if claims is not None:
                from entropic_bound.config.claims import check_claims_estimators

                check_claims_estimators(cfg, claims)
        except ConfigError as exc:
            raise ConfigError(f"{where}: {exc}") from None
        if cfg["task"]["d"] != s["d"]:
            raise ConfigError(
                f"{where}: the config runs task.d = {cfg['task']['d']}, not d = {s['d']}; "
                f"list it under d = {cfg['task']['d']}"
            )
        name = cfg["run_name"]
        if name in runs:
            raise ConfigError(
                f"{where}: run_name '{name}' is also scales[{runs[name]}]'s, so both runs "
                f"would write results/{name}/ at once; give each config its own run_name"
            )
        runs[name] = i
        is_own = own is not None and name == own.get("run_name")
        if is_own and run_settings(cfg) != run_settings(own):
            differ = sorted(
                k
                for k in run_settings(cfg).keys() | run_settings(own).keys()
                if cfg.get(k) != own.get(k)
            )
            raise ConfigError(
                f"{where}: results/{name}/ is also the run of the config this study was started "
                f"with, which differs from it (keys {', '.join(differ)}); start the study with "
                "the listed config or give one of the two another run_name"
            )
        out.append(
            {"d": s["d"], "config": str(config), "run_name": name, "values": cfg, "own": is_own}
        )
    return sorted(out, key=lambda s: s["d"])


def config_hash(cfg: dict) -> str:
    """Short, order-independent hash of a resolved config."""
    return hashlib.sha256(json.dumps(cfg, sort_keys=True, default=str).encode()).hexdigest()[:12]


def class_optim(cfg: dict, family: str) -> dict:
    """Optimiser settings of a student class: the class's entry over ``default``."""
    classes = cfg["train"]["classes"]
    return {**classes["default"], **classes.get(family, {})}
