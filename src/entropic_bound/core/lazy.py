"""Lazy re-exports for the packages' ``__init__.py`` (PEP 562).

A package re-exports its public names from the modules that define them, so that users import
from the short path (``from entropic_bound.tasks import make_task``) while the code lives where
it belongs. Importing lazily keeps the torch-free modules torch-free: Snakemake imports
``entropic_bound.tasks.grid`` at every parse, and an eager ``tasks/__init__.py`` would pull
torch in through ``tasks.make`` (~2.5 s a call).
"""

from __future__ import annotations

import importlib


def _absolute(package: str, module: str) -> str:
    """``module`` relative to ``package``; a leading ``..`` climbs to the parent package."""
    if module.startswith(".."):
        return f"{package.rsplit('.', 1)[0]}.{module[2:]}"
    return f"{package}.{module}"


def lazy_exports(package: str, exports: dict[str, str]):
    """``(__getattr__, __dir__, __all__)`` for ``package``: ``exports`` maps each public name
    to the submodule (relative to ``package``) that defines it."""

    def __getattr__(name: str):
        try:
            module = exports[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        return getattr(importlib.import_module(_absolute(package, module)), name)

    def __dir__() -> list[str]:
        return sorted(exports)

    return __getattr__, __dir__, sorted(exports)
