"""The heads study's registered tests (docs/method.md §9b; registration config/heads_claims.yaml):
from one table of every measured head of the study to a verdict table.

The input ``heads`` has one row per head of every model: ``model`` (its name), ``layer``,
``knee``, ``gap``, ``knee_resolved`` (:mod:`.reliability`) and every column a test names. A head
is **eligible** when it has a knee, its gap is ≥ ``eligibility.min_gap`` and (when registered)
its knee is resolved. The null guess is :mod:`.baselines`'s ``guess`` read over every head of the
same model that has a knee (what the model's measured knees say, eligible or not).

* **names the knee** (``names_the_knee``): on the eligible heads pooled over models, the share
  whose estimate rounds (half up) to within ±1 of the knee ≥ ``min_within1``, **and** the
  one-sided exact Wilcoxon signed-rank test of |guess − knee| − |estimate − knee| has a
  Holm-adjusted p ≤ ``alpha``. A NaN estimate is a miss and a loss (its error is +∞).
* **orders the heads** (``orders_the_heads``): the weighted mean of the within-model Spearman
  correlations of estimate and knee over eligible heads ≥ ``min_spearman``, **and** its
  within-model permutation p (:func:`.stats.stratified_spearman`), Holm-adjusted, ≤ ``alpha``;
  a model enters with ≥ ``min_heads_per_model`` eligible heads, the test needs ≥ ``min_models``.

Verdicts: ``supported`` when every check passes, ``not supported`` when one fails,
``inconclusive`` when the study has fewer than ``min_eligible_heads`` eligible heads (every
test) or an ordering test has too few models. Holm's family is every registered test; an
inconclusive test's p counts as 1, so it can never loosen another's.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from entropic_bound.core.estimators import round_rank
from entropic_bound.heads.baselines import null_guesses
from entropic_bound.heads.stats import holm, stratified_spearman, wilcoxon_greater

SUPPORTED, NOT_SUPPORTED, INCONCLUSIVE = "supported", "not supported", "inconclusive"
#: the verdict table's columns (results/heads_study/verdicts.csv)
COLUMNS = [
    "claim",
    "kind",
    "column",
    "check",
    "value",
    "sense",
    "threshold",
    "heads",
    "passed",
    "verdict",
    "note",
]
#: every column a registered test's input needs besides the ones it names
NEEDED = ("model", "layer", "knee", "gap", "knee_resolved")


def eligible(heads: pd.DataFrame, reg: dict) -> pd.Series:
    """The heads the tests read (module docstring)."""
    e = reg["eligibility"]
    ok = np.isfinite(heads["knee"]) & (heads["gap"] >= e["min_gap"])
    if e["resolved"]:
        ok &= heads["knee_resolved"].astype(bool)
    return ok


def registered_tests(reg: dict) -> list[tuple[str, str, dict]]:
    """(id, kind, spec) of every registered test, in the registration's order."""
    return [(k, "names_the_knee", v) for k, v in reg["names_the_knee"].items()] + [
        (k, "orders_the_heads", v) for k, v in reg["orders_the_heads"].items()
    ]


def names_the_knee(heads, keep, guess, spec) -> dict:
    """The within-±1 share and the raw one-sided p of one "names the knee" test."""
    rows = keep & np.isfinite(guess)
    est, knee, g = heads[spec["column"]][rows], heads["knee"][rows], guess[rows]
    err = np.abs(est - knee).fillna(np.inf)
    within = (np.abs(round_rank(est) - knee) <= 1) & np.isfinite(est)
    _, p = wilcoxon_greater((np.abs(g - knee) - err).to_numpy())
    share = float(within.mean()) if rows.any() else np.nan
    return {"heads": int(rows.sum()), "share": share, "p": p if rows.any() else np.nan}


def orders_the_heads(heads, keep, spec, seed: int) -> dict:
    """The weighted within-model Spearman, its raw permutation p and the models used."""
    sub = heads[keep]
    counts = sub.groupby("model")["knee"].transform("size")
    sub = sub[counts >= spec["min_heads_per_model"]]
    rho, p, used = stratified_spearman(
        sub[spec["column"]].fillna(-np.inf),
        sub["knee"],
        sub["model"],
        spec["permutations"],
        seed,
        min_size=spec["min_heads_per_model"],
    )
    return {"heads": len(sub), "rho": rho, "p": p, "models": used}


def evaluate(heads: pd.DataFrame, reg: dict, seed: int = 0) -> pd.DataFrame:
    """The verdict table of registration ``reg`` on the study's ``heads`` (module docstring):
    one row for eligibility, then one per check of every test."""
    named = [spec["column"] for _, _, spec in registered_tests(reg)]
    missing = [c for c in (*NEEDED, *named) if c not in heads.columns]
    if missing:
        raise ValueError(f"the heads table lacks {', '.join(missing)}; measure every model first")
    keep = eligible(heads, reg)
    enough = int(keep.sum()) >= reg["min_eligible_heads"]
    guess = null_guesses(heads, "model")[reg["guess"]]
    results = []
    for test_id, kind, spec in registered_tests(reg):
        if kind == "names_the_knee":
            r = names_the_knee(heads, keep, guess, spec)
            decidable = enough
        else:
            r = orders_the_heads(heads, keep, spec, seed)
            decidable = enough and r["models"] >= spec["min_models"]
        results.append((test_id, kind, spec, r, decidable))
    adjusted = holm([r["p"] if ok and np.isfinite(r["p"]) else 1.0 for *_, r, ok in results])
    rows = [_eligibility_row(int(keep.sum()), len(heads), reg, enough)]
    for (test_id, kind, spec, r, decidable), p_holm in zip(results, adjusted, strict=True):
        rows += _test_rows(test_id, kind, spec, r, decidable, float(p_holm), reg)
    return pd.DataFrame(rows, columns=COLUMNS)


def _eligibility_row(n: int, total: int, reg: dict, enough: bool) -> dict:
    e = reg["eligibility"]
    return {
        "claim": "eligibility",
        "kind": "eligibility",
        "column": "knee",
        "check": "eligible heads",
        "value": float(n),
        "sense": ">=",
        "threshold": float(reg["min_eligible_heads"]),
        "heads": total,
        "passed": enough,
        "verdict": "enough" if enough else INCONCLUSIVE,
        "note": f"knee, gap ≥ {e['min_gap']:g} nats/byte"
        + (", knee resolved" if e["resolved"] else "")
        + f"; {n} of {total} heads",
    }


def _test_rows(test_id, kind, spec, r, decidable, p_holm, reg) -> list[dict]:
    if kind == "names_the_knee":
        first = ("within ±1 share", r["share"], ">=", spec["min_within1"])
        why = f"{reg['guess']} guess; raw one-sided Wilcoxon p {r['p']:.3g}"
    else:
        first = ("within-model Spearman", r["rho"], ">=", spec["min_spearman"])
        why = (
            f"{r['models']} models of ≥ {spec['min_heads_per_model']} eligible heads "
            f"(need {spec['min_models']}); raw permutation p {r['p']:.3g}"
        )
    checks = [first, ("Holm-adjusted p", p_holm, "<=", reg["alpha"])]
    passed = [holds(v, sense, t) for _, v, sense, t in checks]
    if not decidable:
        verdict = INCONCLUSIVE
    else:
        verdict = SUPPORTED if all(passed) else NOT_SUPPORTED
    return [
        {
            "claim": test_id,
            "kind": kind,
            "column": spec["column"],
            "check": name,
            "value": value,
            "sense": sense,
            "threshold": float(threshold),
            "heads": r["heads"],
            "passed": ok if decidable else None,
            "verdict": verdict,
            "note": why,
        }
        for (name, value, sense, threshold), ok in zip(checks, passed, strict=True)
    ]


def holds(value: float, sense: str, threshold: float) -> bool:
    """Whether ``value`` meets ``threshold`` in ``sense`` (">=", "<=", ">"); a missing or
    non-finite value never does."""
    if value is None or not math.isfinite(value):
        return False
    return {">=": value >= threshold, "<=": value <= threshold, ">": value > threshold}[sense]


def verdict_markdown(verdicts: pd.DataFrame) -> str:
    """The verdict table as the study's page shows it (claim, value, threshold, heads, verdict)."""
    lines = [
        "| claim | estimate | check | value | threshold | heads | verdict |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in verdicts.itertuples(index=False):
        value = "—" if not np.isfinite(r.value) else f"{r.value:.3g}"
        lines.append(
            f"| {r.claim} | {r.column} | {r.check} | {value} | {r.sense} {r.threshold:g} | "
            f"{r.heads} | {r.verdict} |"
        )
    return "\n".join(lines)
