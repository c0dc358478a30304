"""Configuration: load, validate against the JSON schema, hash (no Snakemake imports)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
SCHEMAS = REPO / "workflow" / "schemas"


class ConfigError(ValueError):
    """A config file that does not match its schema; the message names the key."""


def _schema(name: str) -> dict:
    return yaml.safe_load((SCHEMAS / f"{name}.schema.yaml").read_text())


def validate(cfg: dict, schema: str = "config") -> dict:
    """Raise ConfigError naming the first offending key, else return cfg unchanged."""
    import jsonschema

    errors = sorted(
        jsonschema.Draft202012Validator(_schema(schema)).iter_errors(cfg),
        key=lambda e: list(e.absolute_path),
    )
    if errors:
        e = errors[0]
        where = ".".join(str(p) for p in e.absolute_path) or "<top level>"
        raise ConfigError(f"{schema} key '{where}': {e.message}")
    return cfg


def load_config(path, schema: str = "config") -> dict:
    try:
        cfg = yaml.safe_load(Path(path).read_text())
    except FileNotFoundError:
        raise ConfigError(f"config file {path} does not exist") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"config file {path} is not valid YAML: {exc}".splitlines()[0]) from None
    if not isinstance(cfg, dict):
        raise ConfigError(f"config file {path} must hold a mapping of keys")
    return validate(cfg, schema)


def config_hash(cfg: dict) -> str:
    """Short, order-independent hash of a resolved config."""
    return hashlib.sha256(json.dumps(cfg, sort_keys=True, default=str).encode()).hexdigest()[:12]


def class_optim(cfg: dict, family: str) -> dict:
    """Optimiser settings of a student class: the class's entry over ``default``."""
    classes = cfg["train"]["classes"]
    return {**classes["default"], **classes.get(family, {})}
