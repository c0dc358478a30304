"""The claims' common ground: verdict words, the tables claims read, the abstract's sentences,
the :class:`Check`/:class:`Claim` types, the :data:`CLAIMS` registry and its :func:`claim`
decorator, and the pieces several claims share (deficiency, achievability, recovery).

The claims themselves live in :mod:`.claims_static` (C1–C5) and :mod:`.claims_attention`
(C6–C9), which imports the former first, so the registry holds C1..C9 in order;
:mod:`.claims` re-exports every public name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .analysis import (
    estimate_finite,
    exact_summary,
    full_rank_students,
    own_class_curves,
    pretty_estimator,
    spectra_matrix,
)

REPRODUCED, NOT_REPRODUCED, MISSING = "reproduced", "not reproduced", "missing input"
COLUMNS = ["claim", "statement", "measured", "threshold", "verdict"]

#: the file of each table under results/<run_name>/tables/
TABLE_FILES = {
    "data_only_predictions": "data_only_predictions.csv",
    "frontier": "frontier.csv",
    "train_metrics": "train_metrics.parquet",
    "train_dynamics": "train_dynamics.parquet",
}

#: the abstract's sentence each claim tests (paper/ABSTRACT.md)
STATEMENTS = {
    "C1": "in a linear attention surrogate ... any rank-deficient model incurs unavoidable excess risk",
    "C2": "the bound is achievable at r*",
    "C3": "gradient descent recovers this rank under standard low-rank implicit-bias assumptions",
    "C4": "r* is recoverable from data before training",
    "C5": "A naive transfer [to real attention] fails",
    "C6": "it is not softmax and not a rank constraint, but the input-conditioned nature of "
    "attention's mixing operator, which a static weight kernel cannot summarize",
    "C7": "under this [attention-native] definition the full Entropic Bound structure (deficiency, "
    "achievability, recovery) is restored for both linear and softmax attention",
    "C8": "the energy effective rank [is] the estimator robust to softmax distortion",
    "C9": "r* is exactly recoverable for linear QK attention, even without the value map at scale, "
    "while softmax attention admits only partial pre-training recovery",
}


@dataclass
class Check:
    """One conjunct of a claim: passed is True, False, or None (no data to decide)."""

    passed: bool | None
    measured: str


@dataclass(frozen=True)
class Claim:
    """A registered claim: the tables it reads, its test in words, and its checks.

    Calling it with ``(tables, claims)`` returns the verdict row; an absent table gives
    ``missing input`` before any check runs (the guard every claim shares).
    """

    cid: str
    needs: tuple[str, ...]
    threshold: Callable[[dict], str]
    checks: Callable[[Mapping, dict], list[Check]]

    def __call__(self, tables: Mapping, claims: dict) -> dict:
        threshold = self.threshold(claims)
        absent = [t for t in self.needs if tables.get(t) is None]
        if absent:
            return {
                "claim": self.cid,
                "statement": STATEMENTS[self.cid],
                "measured": "absent: " + ", ".join(TABLE_FILES[t] for t in absent),
                "threshold": threshold,
                "verdict": MISSING,
            }
        return _row(self.cid, self.checks(tables, claims), threshold)


#: claim id -> :class:`Claim`, in registration order (C1..C9)
CLAIMS: dict[str, Claim] = {}


def claim(cid: str, needs: tuple[str, ...], threshold: Callable[[dict], str]):
    """Register ``fn(tables, claims) -> list[Check]`` as claim ``cid`` (returns the Claim)."""

    def register(fn: Callable[[Mapping, dict], list[Check]]) -> Claim:
        CLAIMS[cid] = Claim(cid, tuple(needs), threshold, fn)
        return CLAIMS[cid]

    return register


def _g(x: float) -> str:
    """A number for a human: 3 significant digits, NaN as 'n/a'."""
    return "n/a" if x is None or not np.isfinite(x) else f"{x:.3g}"


def _rate(summary: dict) -> str:
    if summary["n"] == 0:
        return "no cases"
    return (
        f"exact {summary['exact']}/{summary['n']} = {summary['exact_rate']:.2f}; "
        f"mean |err| {_g(summary['mean_abs_error'])}"
    )


def _row(claim: str, checks: list[Check], threshold: str) -> dict:
    if any(c.passed is False for c in checks):
        verdict = NOT_REPRODUCED
    elif any(c.passed is None for c in checks):
        verdict = MISSING
    else:
        verdict = REPRODUCED
    return {
        "claim": claim,
        "statement": STATEMENTS[claim],
        "measured": "; ".join(c.measured for c in checks),
        "threshold": threshold,
        "verdict": verdict,
    }


def _absent_rungs(present, wanted) -> str:
    gone = [r for r in wanted if r not in set(present)]
    return f" (absent: {', '.join(gone)})" if gone else ""


def _nan_note(values: pd.Series, what: str) -> str:
    """'; k NaN <what>' when some tested values are NaN (they count as failures)."""
    k = int(values.isna().sum())
    return f"; {k} NaN {what} (counted as failures)" if k else ""


# ---------------------------------------------------------------- shared pieces


def _deficiency(curves: pd.DataFrame, rung: str) -> pd.DataFrame:
    """Own-class median R at every rank r < r* of the rung's tasks where R*(r) > 0, with
    R/R*(r); a NaN R stays (NaN ratio) and fails every comparison."""
    own = own_class_curves(curves)
    d = own[(own["rung"] == rung) & (own["rank"] < own["r_star"]) & (own["R_theory"] > 0)]
    return d.assign(ratio=d["R"] / d["R_theory"])


def _sparse_note(d: pd.DataFrame, curves: pd.DataFrame, rung: str) -> str:
    """How many of the (task, r < r*) cells were trained, when a rank search skipped some."""
    own = own_class_curves(curves)
    tasks = own[own["rung"] == rung].drop_duplicates("task_id")
    cells = int((tasks["r_star"] - 1).clip(lower=0).sum())
    if len(d) >= cells:
        return ""
    return f" [rank search: tests the {len(d)} trained of {cells} (task, r < r*) cells]"


def _achievability(curves: pd.DataFrame, rung: str, max_risk: float) -> Check:
    """Median R at r = r* ≤ max_risk on every task of the rung (NaN R fails)."""
    own = own_class_curves(curves)
    at = own[(own["rung"] == rung) & (own["rank"] == own["r_star"])]["R"]
    if at.empty:
        return Check(None, f"{rung}: no student at r = r*")
    ok = int((at <= max_risk).sum())
    return Check(
        bool(ok == len(at)),
        f"{rung}: R(r*) ≤ {_g(max_risk)} on {ok}/{len(at)} tasks (max {_g(at.max())})"
        + _nan_note(at, "R"),
    )


def _recovery(metrics: pd.DataFrame, rung: str, claims: dict) -> Check:
    """The claims estimator on the learned kernels of full-rank students = r* on ≥ C3's rate;
    a non-finite learned spectrum is an estimate of NaN, a miss."""
    est, min_rate = claims["estimator"], claims["C3"]["min_exact_rate"]
    full = full_rank_students(metrics)
    full = full[full["rung"] == rung]
    if full.empty:
        return Check(None, f"{rung}: no full-rank student")
    r_hat = estimate_finite(spectra_matrix(full["spectrum"]), est, tol=claims["numerical_tol"])
    s = exact_summary(r_hat, full["r_star"])
    return Check(
        bool(s["exact_rate"] >= min_rate),
        f"{rung} learned {pretty_estimator(est)} = r*: {_rate(s)}"
        + _nan_note(pd.Series(r_hat), "spectra"),
    )
