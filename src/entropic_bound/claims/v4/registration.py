"""Registration v4 as data (docs/method.md §5d): the sub-claims declared in config/claims.yaml
(``v4.subclaims``: id, claim, role, fragment, primitive, select, inputs, need), evaluated over
the primitives (:mod:`.primitives`) and the selectors (:mod:`.selectors`).

A claim is reproduced when every counted sub-claim is; a validation (a theorem of the setting)
is shown and checked, never counted; a line beyond the abstract is shown outside the verdict.
Verdict of a claim, from its counted sub-claims: any not reproduced → not reproduced; else the
first of ill-posed, no power, insufficient data, missing input that any carries; else
reproduced. A claim with validations only is "validated" when they all hold.
Each sub-claim is evaluated on its own: an error inside one is that line's missing input, with
the reason, never the loss of another line or claim.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from entropic_bound.claims.v4 import primitives as P
from entropic_bound.claims.v4.selectors import SELECTORS, Selected, v3_checks
from entropic_bound.claims.verdict import (
    ILL_POSED,
    INSUFFICIENT,
    MISSING,
    NOT_REPRODUCED,
    REPRODUCED,
    Check,
    Claim,
    _row,
    fmt,
    verdict_of,
)

VALIDATED = "validated"
#: subclaims.csv: one row per v4 sub-claim
SUB_COLUMNS = [
    "registration",
    "claim",
    "subclaim",
    "role",
    "fragment",
    "primitive",
    "verdict",
    "value",
    "sense",
    "threshold",
    "n",
    "measured",
]
ROLES = ("counted", "validation", "beyond")


def subclaim_verdict(check: Check) -> str:
    """One line's word: reproduced / not reproduced, or why it is undecided."""
    if check.passed is True:
        return REPRODUCED
    if check.passed is False:
        return NOT_REPRODUCED
    return check.status or MISSING


def _line_word(entry: dict, check: Check) -> str:
    """A line's word in subclaims.csv: a validation that holds reads "validated"."""
    word = subclaim_verdict(check)
    return VALIDATED if entry["role"] == "validation" and word == REPRODUCED else word


def claim_verdict(lines: list[tuple[dict, Check]]) -> str:
    """A claim's word from its sub-claims (module docstring)."""
    counted = [subclaim_verdict(c) for e, c in lines if e["role"] == "counted"]
    if not counted:
        checks = [c for e, c in lines if e["role"] == "validation"]
        if not checks:
            return MISSING
        words = {subclaim_verdict(c) for c in checks}
        if words == {REPRODUCED}:
            return VALIDATED
        return NOT_REPRODUCED if NOT_REPRODUCED in words else MISSING
    if NOT_REPRODUCED in counted:
        return NOT_REPRODUCED
    for word in (ILL_POSED, P.NO_POWER, INSUFFICIENT, MISSING):
        if word in counted:
            return word
    return REPRODUCED


def _decide(entry: dict, sel: Selected, s: Mapping) -> Check:
    name, prim = entry["id"], entry["primitive"]
    need = entry.get("need")
    if prim == "rate":
        check = P.rate(
            name,
            sel.outcome,
            need,
            s,
            sel.what,
            entry.get("at_most", False),
            sel.unit,
            sel.independent,
        )
    elif prim == "universal":
        check = P.universal(name, sel.outcome, sel.what, sel.unit)
    elif prim == "trend":
        rises = entry["inputs"]["sense"] == "rises"
        check = P.trend(name, sel.scores["x"], sel.scores["y"], need, rises, s, sel.what)
    elif prim == "paired":
        c = s["C8"]
        higher = entry["select"] == "distortion_rate"
        margin = c["margin_rate"] if higher else c["margin_shift"]
        check = P.no_better(
            name,
            sel.scores,
            c["estimator"],
            margin,
            higher,
            sel.what,
            sel.n,
            _pretty,
        )
        if sel.independent is not None and sel.independent < s["min_tasks"]:
            check = Check(
                None,
                f"{check.measured} (insufficient data: {sel.independent} "
                f"teachers < {s['min_tasks']})",
                INSUFFICIENT,
                check.headline,
                name,
            )
        elif sel.power is not None and not sel.power[0] and check.passed is not False:
            check = P.no_power(check, sel.power[1])
        elif sel.power is not None:
            check.measured += f"; {sel.power[1]}"
    else:
        raise ValueError(f"unknown primitive {prim!r}")
    check.measured += sel.note
    return check


def _pretty(e: str) -> str:
    from entropic_bound.analysis import pretty_estimator

    return pretty_estimator(e)


def evaluate_subclaim(entry: dict, tables: Mapping, claims: dict, run: dict | None) -> Check:
    """One sub-claim's check (named by its id); any error inside it: missing input, with the
    reason."""
    s = claims["v4"]
    try:
        if entry["primitive"] == "v3":
            checks = v3_checks(tables, run, claims, entry["inputs"])
            word = verdict_of(checks)
            text = "v3 as registered: " + "; ".join(c.measured for c in checks)
            passed = {REPRODUCED: True, NOT_REPRODUCED: False}.get(word)
            status = None if passed is not None else word
            return Check(passed, text, status, None, entry["id"])
        if run is None:
            return Check(
                None, "the run's config is needed (the units it registers)", name=entry["id"]
            )
        inputs = dict(entry.get("inputs") or {})
        if entry["select"] == "static_student_risk":
            inputs["need"] = entry["need"]
        sel = SELECTORS[entry["select"]](tables, run, s, inputs)
        if isinstance(sel, Check):
            sel.name = entry["id"]
            return sel
        return _decide(entry, sel, s)
    except Exception as exc:  # noqa: BLE001  one line's fault is that line's missing input
        why = " ".join(str(exc).split())[:200]  # one line
        return Check(None, f"missing input: {type(exc).__name__}: {why}", name=entry["id"])


def entries(claims: dict, cid: str | None = None) -> list[dict]:
    subs = claims["v4"]["subclaims"]
    return [e for e in subs if cid is None or e["claim"] == cid]


def evaluate_lines(tables: Mapping, claims: dict, run: dict | None, cid=None):
    """[(entry, check)] of every sub-claim (of claim ``cid`` when given), in registered order;
    each check carries its sub-claim's role."""
    out = []
    for e in entries(claims, cid):
        check = evaluate_subclaim(e, tables, claims, run)
        check.name, check.role = e["id"], e["role"]
        out.append((e, check))
    return out


def subclaim_table(tables: Mapping, claims: dict, run: dict | None) -> pd.DataFrame:
    """subclaims.csv: one row per v4 sub-claim (columns SUB_COLUMNS)."""
    if "v4" not in claims:
        return pd.DataFrame(columns=SUB_COLUMNS)
    rows = []
    for e, c in evaluate_lines(tables, claims, run):
        head = c.headline or (None, np.nan, None, np.nan, np.nan)
        rows.append(
            {
                "registration": "v4",
                "claim": e["claim"],
                "subclaim": e["id"],
                "role": e["role"],
                "fragment": e["fragment"],
                "primitive": e["primitive"],
                "verdict": _line_word(e, c),
                "value": head[1],
                "sense": head[2],
                "threshold": head[3],
                "n": head[4],
                "measured": c.measured,
            }
        )
    return pd.DataFrame(rows, columns=SUB_COLUMNS)


@dataclass(frozen=True)
class ClaimV4(Claim):
    """A v4 claim: its row's verdict from its sub-claims (:func:`claim_verdict`)."""

    def __call__(self, tables: Mapping, claims: dict, run: dict | None = None) -> dict:
        if "v4" not in claims:
            check = Check(None, "config/claims.yaml has no v4 section")
            return _row(self, [check], "v4 not registered") | {"verdict": MISSING}
        lines = evaluate_lines(tables, claims, run, self.cid)
        checks = [c for _, c in lines]
        for _, c in lines:
            c.validation = c.role != "counted"  # the headline number is a counted line's
        row = _row(self, checks, self.threshold(claims["v4"]))
        if row["headline"] is None:  # no counted line carries a number: a validation's, shown
            shown = [c.headline for c in checks if c.role == "validation" and c.headline]
            if shown:
                head = shown[0]
                row.update(zip(("headline", "headline_value", "headline_sense"), head[:3]))
                row.update({"headline_threshold": head[3], "headline_n": head[4]})
        row["measured"] = "; ".join(
            f"[{e['id']} {e['role']}: {_line_word(e, c)}] {c.measured}" for e, c in lines
        )
        row["verdict"] = claim_verdict(lines)
        return row

    def reads(self, claims: dict) -> tuple[str, ...]:
        """The tables this claim's registered lines read (their selectors', a v3 line's
        claim's), so that a planted control re-evaluates the claim only when one changed."""
        from entropic_bound.claims.v4.selectors import NEEDS, claim_v3

        if "v4" not in claims:
            return self.needs
        need: list[str] = []
        for e in entries(claims, self.cid):
            v3 = e["primitive"] == "v3"
            need += claim_v3(e["inputs"]["claim"]).needs if v3 else NEEDS[e["select"]]
        return tuple(dict.fromkeys(need))

    def evaluate(self, tables: Mapping, claims: dict, run: dict | None = None) -> list[Check]:
        """The sub-claims' checks (the controls table reads them by name)."""
        if "v4" not in claims:
            return [Check(None, "config/claims.yaml has no v4 section")]
        return [c for _, c in evaluate_lines(tables, claims, run, self.cid)]


def _threshold_of(cid: str):
    def threshold(v4: dict) -> str:
        parts = []
        for e in v4["subclaims"]:
            if e["claim"] != cid:
                continue
            need = e.get("need")
            at = f" {'≤' if e.get('at_most') else '≥'} {fmt(need)}" if need is not None else ""
            parts.append(f"{e['id']} ({e['role']}) {e['primitive']}{at}")
        return "; ".join(parts)

    return threshold


def build_claims(statements: Mapping[str, str]) -> dict[str, ClaimV4]:
    """cid -> ClaimV4, in the paper's order (the statements of registry.CLAIMS)."""
    from entropic_bound.claims.verdict import TABLE_FILES

    # needs: every table (a line may read any); reads(claims) names those its lines read
    return {
        cid: ClaimV4(cid, st, tuple(TABLE_FILES), _threshold_of(cid), lambda *a: [], "v4")
        for cid, st in statements.items()
    }
