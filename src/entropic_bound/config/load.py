"""Configuration: load strictly, validate, hash (no Snakemake imports).

A config is checked in four passes, each error one line that names the key (or both keys):

1. the file itself (:mod:`strict_yaml`): no duplicate keys, bounded alias expansion;
2. every number finite (YAML's ``.nan``/``.inf`` pass a JSON schema's ``minimum``);
3. the JSON schema of ``schemas/<name>.schema.yaml`` (package data, so an installed package
   validates without the repository), whose ``default`` values are filled in as Snakemake's
   ``validate`` did;
4. the rules that tie keys together (:func:`check_relations`): what would otherwise pass a
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
from importlib import resources
from pathlib import Path

from entropic_bound.config.strict_yaml import MAX_VALUES, StrictYAMLError, read_strict
from entropic_bound.core.rungs import STATIC_RUNGS, kernel_dim, parse_rung, rung_name

REPO = Path(__file__).resolve().parents[3]


class ConfigError(ValueError):
    """A config that cannot run as meant; the message (one line) names the key(s)."""


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
            # a copy: the schema is read once per process, and a list or mapping default
            # handed out by reference would carry one config's edits into the next
            cfg[key] = copy.deepcopy(prop["default"])
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
        check_claims_relations(cfg)
    return cfg


def validate_config(cfg: dict) -> dict:
    """:func:`validate` of a pipeline config (a dict, e.g. Snakemake's ``config``)."""
    return validate(cfg, "config")


def _keys(*keys: str) -> str:
    """``'a' and 'b'``, ``'a', 'b' and 'c'``."""
    quoted = [f"'{k}'" for k in keys]
    return ", ".join(quoted[:-1]) + " and " + quoted[-1]


#: the scale study's directory under results/ (workflow/rules/scale.smk)
SCALE_RUN_NAME = "scale"
#: names under results/ that are not a run's: the scale study's and the file explaining results/
RESERVED_RUN_NAMES = (SCALE_RUN_NAME, "README.md")


def check_relations(cfg: dict) -> None:
    """Rules between keys of a schema-valid pipeline config; each error names every key."""
    if cfg["run_name"] in RESERVED_RUN_NAMES:
        raise ConfigError(
            f"config key 'run_name': results/{cfg['run_name']} is not a run's directory "
            f"({', '.join(RESERVED_RUN_NAMES)} are taken); choose another name"
        )
    t, f = cfg["task"], cfg["frontier"]
    n, d = t["n"], t["d"]
    # an Lλ rung is named after λ (rung_name gives λ back exactly, so distinct λ never share
    # a name); a λ that needs more digits than a name carries is refused
    lam_rungs = []
    for i, lam in enumerate(t["lambdas"]):
        try:
            lam_rungs.append(rung_name("Lam", lam))
        except ValueError as exc:
            raise ConfigError(f"config key 'task.lambdas[{i}]': {exc}") from None
    # a teacher kernel of rank r* needs r* ≤ its size: d for the query-key rungs (checked
    # first, the common case), n for the static rungs L0/L1
    r_max = max(t["r_star"])
    for rung in sorted([*t["rungs"], *lam_rungs], key=lambda r: r in STATIC_RUNGS):
        k = kernel_dim(rung, n, d)
        if r_max > k:
            size_key = "task.n" if rung in STATIC_RUNGS else "task.d"
            raise ConfigError(
                f"config keys {_keys('task.r_star', size_key)}: r* = {r_max} exceeds "
                f"{size_key.split('.')[1]} = {k}, the size of rung {rung}'s kernel; "
                f"use r* ≤ {k}"
            )
    if max(f["r_star"]) > f["d"]:
        raise ConfigError(
            f"config keys {_keys('frontier.r_star', 'frontier.d')}: r* = {max(f['r_star'])} "
            f"exceeds d = {f['d']}, the size of the d×d kernel; use r* ≤ {f['d']}"
        )
    # P_static is a least squares over vec(X) ∈ R^{nd}: it needs n·d training sequences
    if t["n_train"] < n * d:
        raise ConfigError(
            f"config keys {_keys('task.n_train', 'task.n', 'task.d')}: n_train = "
            f"{t['n_train']} < n·d = {n * d}, too few sequences for P_static; "
            f"use n_train ≥ {n * d}"
        )
    # a noisy copy adds noise to the task's own σ: it cannot be as clean or cleaner
    for i, s in enumerate(cfg["predict"]["noisy_sigmas"]):
        if s <= t["sigma"]:
            raise ConfigError(
                f"config keys {_keys(f'predict.noisy_sigmas[{i}]', 'task.sigma')}: a noisy "
                f"copy at σ = {s} is not noisier than the tasks (σ = {t['sigma']}); "
                f"use σ > {t['sigma']} or drop it"
            )
    if cfg["device"] == "cuda" and cfg["train"].get("backend") == "fused":
        raise ConfigError(
            f"config keys {_keys('train.backend', 'device')}: the fused backend runs on the "
            "CPU only; use backend auto or torch with device cuda"
        )
    # the boundaries sweep bisects a log grid of σ from sigma_min up to sigma_max (the
    # boundaries job raised on an empty grid, after every other job had run)
    b = cfg["exploratory"]["boundaries"]
    if not b["sigma_min"] < b["sigma_max"]:
        raise ConfigError(
            f"config keys {_keys('exploratory.boundaries.sigma_min', 'exploratory.boundaries.sigma_max')}: "
            f"the σ grid runs from sigma_min = {b['sigma_min']} up to sigma_max = "
            f"{b['sigma_max']}; use sigma_min < sigma_max"
        )
    _check_floor_aware(cfg)
    tr = cfg["train"]
    if tr.get("products") == "factored" and (
        tr.get("backend") == "torch" or cfg["device"] == "cuda"
    ):
        raise ConfigError(
            f"config keys {_keys('train.products', 'train.backend', 'device')}: products "
            "factored is a form of the fused CPU kernel; use products auto (or dense) with the "
            "torch backend or device cuda"
        )


def check_claims_relations(claims: dict) -> None:
    """Every rung a claim names is a rung name (a typo would make the claim 'missing input')."""
    lists = [("C5", "rungs"), ("C6", "static_rungs"), ("C6", "attention_rungs"), ("C7", "rungs")]
    for claim, key in lists:
        for i, rung in enumerate(claims[claim][key]):
            _check_rung(rung, f"{claim}.{key}[{i}]")
    _check_rung(claims["C8"]["rung"], "C8.rung")
    # C8 computes its estimators on learned spectra itself (any τ), so they need only be
    # estimators: energy_<τ> with 0 < τ ≤ 1, spelled as the tables spell it
    for key, name in [("estimator", claims["estimator"])] + [
        (f"C8.estimators[{i}]", e) for i, e in enumerate(claims["C8"]["estimators"])
    ]:
        _check_estimator(name, key)


def _check_floor_aware(cfg: dict) -> None:
    """X3's estimators are names of the one registry (core/estimators.py), opt-in ones included;
    its held-out seeds are not the frontier's own (they would not be held out)."""
    from entropic_bound.core.estimators import estimate, estimator_names

    fa = cfg["exploratory"]["floor_aware"]
    for i, name in enumerate(fa["estimators"]):
        try:
            estimate([1.0], name)
        except ValueError:
            raise ConfigError(
                f"config key 'exploratory.floor_aware.estimators[{i}]': {name!r} is not an "
                f"estimator; name one of {', '.join(estimator_names(opt_in=True))} (or "
                "energy_<τ>, 0 < τ ≤ 1)"
            ) from None
    shared = sorted(set(fa["seeds"]) & set(cfg["frontier"]["seeds"]))
    if shared:
        raise ConfigError(
            f"config keys {_keys('exploratory.floor_aware.seeds', 'frontier.seeds')}: seeds "
            f"{shared} are the frontier's own, so they are not held out; choose other seeds"
        )


def _check_estimator(name: str, key: str) -> None:
    from entropic_bound.core.estimators import energy_name, energy_tau, estimator_names

    try:
        tau = energy_tau(name)
    except ValueError:
        tau = math.nan
    if tau is not None and not (0 < tau <= 1 and energy_name(tau) == name):
        raise ConfigError(
            f"claims key '{key}': {name!r} is not an estimator; energy_<τ> needs 0 < τ ≤ 1 "
            f"written as energy_0.99 ({', '.join(estimator_names(()))} need no τ)"
        )


def _check_rung(rung: str, key: str) -> None:
    try:
        parse_rung(rung)
    except ValueError as exc:
        raise ConfigError(f"claims key '{key}': {exc}") from None


def read_config(path) -> dict:
    """Read ``path`` strictly (:mod:`strict_yaml`): a mapping, not yet validated."""
    try:
        cfg = read_strict(path)
    except StrictYAMLError as exc:
        raise ConfigError(str(exc)) from None
    if not isinstance(cfg, dict):
        raise ConfigError(f"config file {path} must hold a mapping of keys")
    return cfg


def load_config(path, schema: str = "config") -> dict:
    """Read ``path`` strictly (:mod:`strict_yaml`) and :func:`validate` it."""
    return validate(read_config(path), schema)


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


def check_workflow_config(cfg: dict, configfiles, claims_path) -> dict:
    """What the Snakefile runs before any rule: re-read every config file Snakemake merged
    into ``cfg`` strictly (Snakemake's own reader accepts duplicate keys and alias bombs),
    validate the merged ``cfg`` in place, and return the validated claims thresholds."""
    for path in configfiles:
        try:
            read_strict(path)
        except StrictYAMLError as exc:
            raise ConfigError(str(exc)) from None
    validate(cfg, "config")
    claims = load_config(claims_path, "claims")
    check_claims_estimators(cfg, claims)
    return claims


def check_claims_estimators(cfg: dict, claims: dict) -> None:
    """The claims estimator is one the run's tables hold: numerical, stable, entropy,
    participation or energy_<τ> for a τ of ``predict.taus``, spelled as the tables spell it
    (``energy_0.5`` with taus [0.9, 0.99], or ``energy_00.99``, passed the schema and left
    every claim that reads it without rows, after the whole run)."""
    from entropic_bound.core.estimators import estimator_names

    computed = estimator_names(cfg["predict"]["taus"])
    if claims["estimator"] not in computed:
        raise ConfigError(
            f"claims key 'estimator' and config key 'predict.taus': {claims['estimator']!r} "
            f"is not an estimator this run computes ({', '.join(computed)}); name one of "
            "them, or add its τ to predict.taus"
        )


def scale_study_asked(argv: list[str], cfg: dict) -> bool:
    """Whether a Snakemake invocation may run the scale study, and so must check the scale
    list whole at parse time: a ``scale_list`` in its config, or a word of its command line
    ``argv`` naming the study (a scale rule, a file under results/scale/). Snakemake knows its
    targets only after the parse, so this reads the words, and errs towards yes ("scale" in any
    word but a config file's name), which only makes a parse stricter."""
    if "scale_list" in cfg:
        return True
    words = [a for a in argv[1:] if not a.startswith("-")]
    return any("scale" in a and not a.endswith((".yaml", ".yml", ".json")) for a in words)


def load_scale_list(path, resolve=Path, base=None, claims: dict | None = None) -> list[dict]:
    """``snakemake scale``'s list (config/scale/scales.yaml), checked whole before any job:
    its form (schema ``scales``), no d twice, every listed config valid as its run will see
    it (``base``, default this clone's config/config.yaml, then the file over it; with
    ``claims``, also against the claims thresholds, :func:`check_claims_estimators`), listed
    under its own ``task.d``, and no two configs writing one ``results/<run_name>/`` (their
    runs would go at once into one directory). ``resolve`` maps a listed path to a file.
    Returns ``[{d, config, run_name}]`` sorted by d, ``config`` resolved."""
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
        out.append({"d": s["d"], "config": str(config), "run_name": name})
    return sorted(out, key=lambda s: s["d"])


def config_hash(cfg: dict) -> str:
    """Short, order-independent hash of a resolved config."""
    return hashlib.sha256(json.dumps(cfg, sort_keys=True, default=str).encode()).hexdigest()[:12]


def class_optim(cfg: dict, family: str) -> dict:
    """Optimiser settings of a student class: the class's entry over ``default``."""
    classes = cfg["train"]["classes"]
    return {**classes["default"], **classes.get(family, {})}
