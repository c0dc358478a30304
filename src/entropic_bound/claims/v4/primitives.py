"""The few decisions registration v4 is made of (docs/method.md §5d): a rate over independent
units with its Clopper–Pearson interval, a universal statement, a paired comparison with a
margin and ties, a Spearman trend, and the power that a comparison needs before it can decide.

Unknown values, the rule every primitive shares. An outcome is True, False or NaN; NaN (a
missing row, a NaN estimate, a cell a join could not match) is *unknown*, never evidence. A
check is decided twice, once with every unknown counted against the claim and once with every
unknown counted for it: if it passes even against, it passes; if it fails even for, it fails
("not reproduced"); otherwise it is undecided and says "missing input", naming the unknown
units. So a missing input is never "not reproduced", and NaN never counts for a claim.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd

from entropic_bound.analysis import spearman, spearman_fillings
from entropic_bound.claims.theory_v3 import clopper_pearson
from entropic_bound.claims.verdict import INSUFFICIENT, Check, bound, fmt, unknown_cells

#: v4's further word: the run's data cannot tell the claim from its negation
NO_POWER = "no power"


def bounded(passes_against: bool, passes_for: bool) -> bool | None:
    """The bounding rule (:func:`entropic_bound.claims.verdict.bound`, defined there once) on
    a check already decided with every unknown against the claim and with every unknown for
    it."""
    return bound(lambda favourable: passes_for if favourable else passes_against)


def _unknown_note(outcome: pd.Series) -> str:
    return unknown_cells(outcome, "units")


def _as_outcome(outcome) -> pd.Series:
    s = pd.Series(outcome, dtype="object") if not isinstance(outcome, pd.Series) else outcome
    return s.astype("object").where(s.notna(), np.nan)


def rate(
    name: str,
    outcome,
    need: float,
    s: Mapping,
    what: str,
    at_most: bool = False,
    unit: str = "tasks",
    independent: int | None = None,
) -> Check:
    """The share of True among the units ≥ ``need`` (≤ when ``at_most``), decided by the
    bounding rule; its Clopper–Pearson interval is stated; fewer than ``min_tasks`` independent
    units (``independent``, default: the units themselves) decide nothing."""
    outcome = _as_outcome(outcome)
    n = len(outcome)
    if n == 0:
        return Check(None, f"{what}: no registered {unit}", name=name)
    known = outcome.dropna().astype(bool)
    hits, unknown = int(known.sum()), n - len(known)
    slack = s["float_slack"]
    lo_share, hi_share = hits / n, (hits + unknown) / n
    if at_most:
        passes_against, passes_for = hi_share <= need + slack, lo_share <= need + slack
    else:
        passes_against, passes_for = lo_share >= need - slack, hi_share >= need - slack
    share = (hi_share if at_most else lo_share) if unknown else hits / n
    lo, hi = clopper_pearson(hits, n, s["confidence"])
    text = f"{what}: {hits}/{n} {unit} = {hits / n:.2f} (95 % CI {lo:.2f}–{hi:.2f})"
    text += _unknown_note(outcome)
    head = (what, share, "<=" if at_most else ">=", need, n)
    units = n if independent is None else independent
    if units < s["min_tasks"]:
        text += f" (insufficient data: {units} independent units < {s['min_tasks']})"
        return Check(None, text, INSUFFICIENT, head, name)
    return Check(bounded(passes_against, passes_for), text, headline=head, name=name)


def universal(name: str, outcome, what: str, unit: str = "tasks", head=None) -> Check:
    """Every unit True: one False decides at any n (a counter-example); unknowns without a
    counter-example leave it undecided; no unit at all is missing input."""
    outcome = _as_outcome(outcome)
    n = len(outcome)
    if n == 0:
        return Check(None, f"{what}: no registered {unit}", name=name)
    known = outcome.dropna().astype(bool)
    bad = [str(i) for i in known.index[~known.to_numpy()]]
    text = f"{what}: {int(known.sum())}/{n} {unit}"
    if bad:
        text += f"; counter-examples: {', '.join(bad[:4])}" + (" …" if len(bad) > 4 else "")
    text += _unknown_note(outcome)
    head = head or (what, float(known.mean()) if len(known) else math.nan, ">=", 1.0, n)
    return Check(bounded(len(known) == n and not bad, not bad), text, headline=head, name=name)


def no_better(
    name: str,
    scores: Mapping[str, float],
    ours: str,
    margin: float,
    higher_is_better: bool,
    what: str,
    n: int,
    pretty=str,
) -> Check:
    """Paired comparison of estimators on the same units: no competitor beats ``ours`` by more
    than ``margin`` (within the margin: a tie, neither a win nor a loss). A NaN score is
    unknown: it could be anything (bounding rule)."""
    sign = 1.0 if higher_is_better else -1.0
    mine = scores[ours]
    others = {e: v for e, v in scores.items() if e != ours}
    parts = ", ".join(f"{pretty(e)} {fmt(v)}" for e, v in scores.items())
    text = f"{what} ({n} matched kernels): {parts}; margin {fmt(margin)}"
    if not others:
        return Check(None, f"{text}; no admitted competitor", name=name)
    gains = {e: sign * (v - mine) for e, v in others.items()}
    beaten = [e for e, g in gains.items() if np.isfinite(g) and g > margin]
    unknown = [e for e, g in gains.items() if not np.isfinite(g)]
    finite = [g for g in gains.values() if np.isfinite(g)]
    best_gain = max(finite) if finite else math.nan
    head = (f"{what}: best competitor's gain over {pretty(ours)}", best_gain, "<=", margin, n)
    if beaten:
        text += f"; beaten by {', '.join(pretty(e) for e in beaten)}"
    ties = [e for e, g in gains.items() if np.isfinite(g) and abs(g) <= margin]
    if ties:
        text += f"; ties: {', '.join(pretty(e) for e in ties)}"
    if unknown:
        text += f"; unknown (NaN): {', '.join(pretty(e) for e in unknown)}"
    passed = bounded(not beaten and not unknown, not beaten)
    return Check(passed, text, headline=head, name=name)


def trend(name: str, x, y, need: float, rises: bool, s: Mapping, what: str) -> Check:
    """Spearman(x, y) ≥ ``need`` (a rise) or ≤ it (a fall) over ≥ ``min_ladder_rungs``
    points; a NaN point is unknown: the trend is decided only if it holds, or fails, in every
    order the unknown points could take among the known ones (too many orders: undecided)."""
    x = pd.Series(x, dtype=float).reset_index(drop=True)
    y = pd.Series(y, dtype=float).reset_index(drop=True)
    n = len(x)
    sense = ">=" if rises else "<="
    if n < s["min_ladder_rungs"]:
        text = f"{what}: {n} points; a trend needs ≥ {s['min_ladder_rungs']} (insufficient data)"
        return Check(None, text, INSUFFICIENT, (what, math.nan, sense, need, n), name)
    nan = y.isna()
    if nan.any():  # every order the unknown points can take among the known ones
        filled = spearman_fillings(x.to_numpy(), y.to_numpy())
        rhos = [] if filled is None else list(filled)
    else:
        rhos = [spearman(x, y)]
    ok = [(r >= need if rises else r <= need) if np.isfinite(r) else False for r in rhos]
    rho = spearman(x, y) if not nan.any() else math.nan
    text = f"{what}: Spearman = {fmt(rho)} over {n} points"
    if nan.any():
        text += f"; unknown at x = {', '.join(fmt(v) for v in x[nan])}"
        text += f" (ρ between {fmt(min(rhos))} and {fmt(max(rhos))})" if rhos else ""
    passed = bounded(all(ok), any(ok)) if rhos else None
    return Check(passed, text, headline=(what, rho, sense, need, n), name=name)


def power(drops: Mapping[str, float], effect: float, what: str) -> tuple[bool, str]:
    """Whether the data can separate a robust estimator from a fragile one: some competitor's
    L4 exact rate lies ≥ ``effect`` below its L3 rate (a distortion to be robust to)."""
    finite = {e: v for e, v in drops.items() if np.isfinite(v)}
    if not finite:
        return False, f"{what}: no competitor's drop could be measured"
    top = max(finite, key=finite.get)
    has = finite[top] >= effect
    return has, (
        f"{what}: largest competitor drop L3 → L4 in exact rate {fmt(finite[top])} ({top}); "
        f"power needs ≥ {fmt(effect)}"
    )


def no_power(check: Check, why: str) -> Check:
    """The comparison undecided for want of power: its numbers kept, its verdict 'no power'."""
    return Check(None, f"{check.measured}; {why}", NO_POWER, check.headline, check.name)
