"""Nested command-line overrides (``snakemake --config 'train={"classes": ...}'``) typed as
a config file would type them.

Snakemake parses a ``--config KEY=VALUE`` value as an int, a float, a boolean, else with YAML's
*base* loader, which leaves every nested scalar a string: ``'train={"classes": {"default":
{"lr": 2.0e-2}}}'`` arrives as ``{"lr": "2.0e-2"}`` and failed the schema ("'2.0e-2' is not of
type 'number'"). :func:`typed_overrides` gives such strings the type YAML 1.2 (and JSON) would:
numbers, booleans and null; anything else stays text. Only the values given on the command line
are touched: a quoted ``"0.02"`` in a config file is still refused.
"""

from __future__ import annotations

import re

#: a JSON / YAML 1.2 number: 2, -3, 0.02, 2.0e-2, 1e-3, .5
_NUMBER = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")
_WORDS = {"true": True, "false": False, "True": True, "False": False, "null": None, "~": None}


def typed(text: str):
    """``"2.0e-2"`` → 0.02, ``"8"`` → 8, ``"true"`` → True, ``"null"`` → None; else the text."""
    s = text.strip()
    if _NUMBER.fullmatch(s):
        if re.fullmatch(r"[-+]?\d+", s):
            return int(s)
        return float(s)
    return _WORDS.get(s, text)


def _retype(value):
    if isinstance(value, str):
        return typed(value)
    if isinstance(value, list):
        return [_retype(v) for v in value]
    if isinstance(value, dict):
        return {k: _retype(v) for k, v in value.items()}
    return value


def typed_overrides(cfg: dict, overrides: dict) -> list[str]:
    """Retype, in ``cfg``, the nested string values that ``overrides`` (Snakemake's
    ``--config`` entries) put there; the dotted keys retyped. Top-level values are Snakemake's
    own (already typed: ``threads=2`` is an int, ``run_name=007`` stays as Snakemake made it)."""
    changed = []

    def walk(node: dict, over: dict, path: str) -> None:
        for key, value in over.items():
            if key not in node:
                continue
            where = f"{path}.{key}"
            if isinstance(value, dict) and isinstance(node[key], dict):
                walk(node[key], value, where)
            elif node[key] == value and _retype(value) != value:
                node[key] = _retype(value)
                changed.append(where)

    for key, value in (overrides or {}).items():
        if isinstance(value, dict) and isinstance(cfg.get(key), dict):
            walk(cfg[key], value, key)
    return changed
