"""Registration H3's verdicts (config/heads_claims_h3.yaml; the reading of each test fixed in
docs/method.md §9e, "How H3 is evaluated") on the table of every measured pretrained head.

The input has one row per head (:mod:`.measure`'s columns) with ``model`` the registration's
name of its model. A head is **eligible** when uniform attention moves ≥ ``min_ablation_share``
of its output's variance and both knees are finite and resolved (each half's knee within
``halves_within`` of the knee, twice that for a rotary head). A model with fewer than
``min_eligible_heads`` eligible heads makes its tests inconclusive. Holm's family is every p;
an inconclusive test's p counts as 1.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from entropic_bound.heads.claims import holds
from entropic_bound.heads.stats import holm, sign_test, stratified_spearman, wilcoxon_greater
from entropic_bound.predict.words import word_holds

SUPPORTED, NOT_SUPPORTED, INCONCLUSIVE = "supported", "not supported", "inconclusive"
COLUMNS = [
    "test",
    "model",
    "check",
    "value",
    "sense",
    "threshold",
    "heads",
    "passed",
    "verdict",
    "note",
]


def grid_step(heads: pd.DataFrame) -> pd.Series:
    """Each head's rank grid: 2 for a rotary head, else 1."""
    return np.where(heads["rotary"].astype(bool), 2, 1)


def eligible(heads: pd.DataFrame, reg: dict) -> pd.Series:
    """The heads the tests read (module docstring)."""
    e = reg["eligibility"]
    tol = e["halves_within"] * grid_step(heads)
    ok = heads["ablation_share"] >= e["min_ablation_share"]
    for metric in ("plain", "inputs_metric"):
        knee = heads[f"knee_{metric}"]
        ok &= np.isfinite(knee)
        for part in ("_a", "_b"):
            ok &= (heads[f"knee_{metric}{part}"] - knee).abs() <= tol
    return ok.fillna(False).astype(bool)


def clopper_pearson_lower(k: int, n: int, level: float = 0.95) -> float:
    """The lower end of the two-sided ``level`` Clopper–Pearson interval of k successes in n:
    the p with P(X ≥ k | p) = (1 − level)/2, by bisection (0 when k = 0)."""
    if k == 0 or n == 0:
        return 0.0
    tail = (1 - level) / 2

    def upper_tail(p):
        return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k, n + 1))

    lo, hi = 0.0, 1.0
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if upper_tail(mid) < tail else (lo, mid)
    return lo


def _row(test, model, check, value, sense, threshold, heads, note="") -> dict:
    row = {"test": test, "model": model, "check": check, "value": float(value), "sense": sense}
    return row | {"threshold": float(threshold), "heads": int(heads), "note": note}


def per_model_tests(heads, keep, reg) -> list[tuple[list[dict], float | None, bool]]:
    """(rows, raw p or None, decidable) of every per-model test."""
    out = []
    t = reg["tests"]
    enough = {
        m: int((keep & (heads["model"] == m)).sum()) >= reg["min_eligible_heads"]
        for m in heads["model"].unique()
    }
    for test in ("A64", "A32"):
        spec = t[test]
        for m in spec["models"]:
            sub = heads[keep & (heads["model"] == m)]
            diff = (sub["kernel_0.9"] - sub["field_0.9"]).to_numpy()
            if spec["direction"] == "kernel_not_above_field":
                diff = -diff
            wins, losses = int((diff > 0).sum()), int((diff < 0).sum())
            p = sign_test(wins, losses)
            note = f"sign test, {wins} wins, {losses} losses, {len(diff) - wins - losses} ties"
            rows = [_row(test, m, "p (Holm)", p, "<=", reg["alpha"], len(sub), note)]
            out.append((rows, p, enough.get(m, False)))
    spec = t["K1"]
    for m in spec["models"]:
        sub = heads[keep & (heads["model"] == m)]
        knee = sub["knee_plain"]
        step = grid_step(sub)
        median = heads.loc[heads["model"] == m, "knee_plain"].median()
        est = sub[spec["column"]]
        within = float(((est - knee).abs() <= step).mean()) if len(sub) else np.nan
        err = (est - knee).abs().fillna(np.inf)
        _, p = wilcoxon_greater(((median - knee).abs() - err).to_numpy())
        note = f"{spec['column']} against the plain knee; model median knee {median:g}"
        rows = [
            _row("K1", m, "within ±1 share", within, ">=", spec["min_within"], len(sub), note),
            _row("K1", m, "p (Holm)", p, "<=", reg["alpha"], len(sub), "Wilcoxon signed-rank"),
        ]
        out.append((rows, p, enough.get(m, False)))
    spec = t["C1"]
    for m in spec["models"]:
        sub = heads[keep & (heads["model"] == m)]
        small = int((sub["knee_plain"] <= spec["max_share_of_d_head"] * sub["d_head"]).sum())
        share = small / len(sub) if len(sub) else np.nan
        lower = clopper_pearson_lower(small, len(sub))
        rows = [
            _row("C1", m, "share knee ≤ d_head/4", share, ">=", spec["min_share"], len(sub)),
            _row("C1", m, "95 % CP lower bound", lower, ">", 0.25, len(sub)),
        ]
        out.append((rows, None, enough.get(m, False)))
    spec = t["M1"]
    for m in spec["models"]:
        sub = heads[keep & (heads["model"] == m)]
        share = float((sub["knee_inputs_metric"] <= sub["knee_plain"]).mean()) if len(sub) else 0
        rows = [
            _row("M1", m, "share metric knee ≤ plain", share, ">=", spec["min_share"], len(sub))
        ]
        out.append((rows, None, enough.get(m, False)))
    return out


def pooled_tests(heads, keep, reg, seed: int = 0) -> list[tuple[list[dict], float | None, bool]]:
    """(rows, raw p, decidable) of P1 and O1, over the eligible heads of models with enough."""
    counts = heads[keep].groupby("model").size()
    models = [m for m, c in counts.items() if c >= reg["min_eligible_heads"]]
    sub = heads[keep & heads["model"].isin(models)]
    out = []
    knee = sub["knee_inputs_metric"]
    step = grid_step(sub)
    kept = [
        word_holds(w, a, f, k, s)
        for w, a, f, k, s in zip(
            sub["predict_word"], sub["predict_rank"], sub["pattn_floor"], knee, step, strict=True
        )
    ]
    promised = [h for h in kept if h is not None]
    broken = sum(1 for h in promised if not h)
    cell = sub["model"].astype(str) + ":" + sub["layer"].astype(str)
    constant = (
        heads[heads["model"].isin(models)]
        .groupby(["model", "layer"])["knee_inputs_metric"]
        .transform("median")
        .loc[sub.index]
    )
    err = (sub["predict_rank"] - knee).abs().fillna(np.inf)
    _, p = wilcoxon_greater(((constant - knee).abs() - err).to_numpy())
    note = f"{len(promised)} heads with a promise, {broken} broken"
    rows = [
        _row("P1", "pooled", "words broken", broken, "<=", 0, len(sub), note),
        _row(
            "P1", "pooled", "p (Holm)", p, "<=", reg["alpha"], len(sub), "against the layer median"
        ),
    ]
    out.append((rows, p, bool(models)))
    spec = reg["tests"]["O1"]
    sizes = cell.map(cell.value_counts())
    in_cells = sub[sizes >= spec["min_heads_per_cell"]]
    rho, p, used = stratified_spearman(
        in_cells[spec["column"]].fillna(-np.inf),
        in_cells["knee_inputs_metric"],
        cell[sizes >= spec["min_heads_per_cell"]],
        spec["permutations"],
        seed,
        min_size=spec["min_heads_per_cell"],
    )
    note = f"{used} model × layer cells of ≥ {spec['min_heads_per_cell']} eligible heads"
    rows = [
        _row(
            "O1",
            "pooled",
            "within-cell Spearman",
            rho,
            ">=",
            spec["min_spearman"],
            len(in_cells),
            note,
        ),
        _row("O1", "pooled", "p (Holm)", p, "<=", reg["alpha"], len(in_cells), "permutation"),
    ]
    out.append((rows, p, used > 0))
    return out


def evaluate(heads: pd.DataFrame, reg: dict, seed: int = 0) -> pd.DataFrame:
    """The verdict table of H3 on ``heads`` (module docstring): eligibility rows per model, then
    every check of every test with its verdict."""
    keep = eligible(heads, reg)
    results = per_model_tests(heads, keep, reg) + pooled_tests(heads, keep, reg, seed)
    adjusted = iter(
        holm([p if ok and p is not None else 1.0 for _, p, ok in results if p is not None])
    )
    rows = []
    for m, g in heads.groupby("model", sort=False):
        n = int(keep[g.index].sum())
        enough = n >= reg["min_eligible_heads"]
        r = _row("eligibility", m, "eligible heads", n, ">=", reg["min_eligible_heads"], len(g))
        rows.append(r | {"passed": enough, "verdict": "enough" if enough else INCONCLUSIVE})
    for test_rows, p, decidable in results:
        p_holm = next(adjusted) if p is not None else None
        for r in test_rows:
            if r["check"] == "p (Holm)":
                r["value"] = p_holm
                r["note"] += f"; raw p {p:.3g}"
        passed = [holds(r["value"], r["sense"], r["threshold"]) for r in test_rows]
        verdict = (SUPPORTED if all(passed) else NOT_SUPPORTED) if decidable else INCONCLUSIVE
        rows += [
            r | {"passed": ok if decidable else None, "verdict": verdict}
            for r, ok in zip(test_rows, passed, strict=True)
        ]
    return pd.DataFrame(rows, columns=COLUMNS)
