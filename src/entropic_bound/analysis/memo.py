"""Memoised table functions, for a caller that asks the same questions of the same tables many
times (the controls: every claim of every registration on 37 planted worlds, each claim
deriving the risk curves and the intrinsic ranks again from the world's tables).

Inside ``with table_memo():`` a function decorated :func:`memoised` returns, for arguments it has
seen, a copy of its first answer. Tables are keyed by identity (the memo holds them, so no
other object takes their id while it is open), everything else by type and value; an argument
that is neither a table nor hashable bypasses the memo. Outside the block nothing is kept, so a
table changed in place between two calls is never a stale hit there. The answers are the
function's own, bitwise.
"""

from __future__ import annotations

import contextlib
import functools

import pandas as pd

_MEMO: dict | None = None


@contextlib.contextmanager
def table_memo():
    """Memoise :func:`memoised` functions inside the block (nested blocks share the outer memo)."""
    global _MEMO
    if _MEMO is not None:
        yield
        return
    _MEMO = {}
    try:
        yield
    finally:
        _MEMO = None


def _key(value):
    if isinstance(value, (pd.DataFrame, pd.Series)):
        return ("table", id(value))
    hash(value)  # TypeError for an unhashable argument: the caller computes without the memo
    return ("value", type(value), value)  # 0 and 0.0 are equal, but not the same argument


def memoised(fn):
    """``fn(*args, **kw)`` answered from the open :func:`table_memo` when it has been asked the
    same; each caller gets its own copy of the answer (a table), so none can change another's."""

    @functools.wraps(fn)
    def wrapper(*args, **kw):
        if _MEMO is None:
            return fn(*args, **kw)
        try:
            key = (
                fn.__qualname__,
                tuple(map(_key, args)),
                tuple((k, _key(v)) for k, v in kw.items()),
            )
        except TypeError:
            return fn(*args, **kw)
        if key not in _MEMO:
            # the arguments are held with the answer: their ids stay theirs while the memo lives
            _MEMO[key] = (args, kw, fn(*args, **kw))
        return _MEMO[key][2].copy()

    return wrapper
