"""The one error of the pretrained models, and the one line for an optional package not installed.

:class:`PretrainedError` is a ``ValueError``: the command line turns it into one stderr line,
``entropic-bound: error: <what is wrong>; <what to do>``, and exit status 2, as every user error.
"""

from __future__ import annotations

import importlib

#: the optional packages of the ``pretrained`` extra, by what they read
EXTRA = "pip install 'entropic-bound[pretrained]'"


class PretrainedError(ValueError):
    """A model folder, file or request that cannot be used: ``what`` is wrong, ``todo`` what to
    do about it (one line each, so that the whole message is one line)."""

    def __init__(self, what: str, todo: str = ""):
        super().__init__(" ".join(f"{what}; {todo}".split()) if todo else " ".join(what.split()))
        self.what, self.todo = what, todo


def need(package: str, purpose: str):
    """Import ``package`` (an optional dependency) or say in one line that it is missing."""
    try:
        return importlib.import_module(package)
    except ImportError:
        raise PretrainedError(
            f"{purpose} needs the Python package {package!r}, which is not installed", EXTRA
        ) from None
