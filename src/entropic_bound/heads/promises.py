"""``predict``'s answers and words on trained heads, against their knees (docs/method.md §9f):
the signals beside each answer, whether each word keeps its promise, and how well each signal
tells right answers from wrong ones.

Input: a study's ``predict.csv`` (:mod:`.study`'s predict table: one row per head with the
knees and :mod:`.predicted`'s columns). The truth is the knee read in the inputs' metric
(``knee_inputs_metric``), the rank a data-only predictor aims at (the plain knee is at least
as high, §9); a word's promise is :func:`predict.words.word_holds` on it.

The signals are :mod:`predict.causal_signals`' (each read from the head's own data, none from
its knee).
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from entropic_bound.core.estimators import estimate, round_rank
from entropic_bound.heads.claims import holds
from entropic_bound.heads.report import markdown_table
from entropic_bound.heads.stats import wilcoxon_greater
from entropic_bound.predict.causal_signals import SIGNALS, causal_signals
from entropic_bound.predict.words import range_error, word_holds


def _spectrum(text) -> np.ndarray | None:
    if not isinstance(text, str):
        return None
    return np.asarray(json.loads(text), dtype=np.float64)


def _rank(spectrum: np.ndarray, estimator: str) -> float:
    return float(round_rank(estimate(spectrum, estimator)))


def head_signals(row: pd.Series) -> dict:
    """Every signal (:func:`predict.causal_signals.causal_signals`) of one head's predict row,
    from the report entry its JSON columns hold; NaN where not measured."""
    halves = [_spectrum(row.get(f"predict_spectrum_{k}")) for k in ("even", "odd")]
    starts = json.loads(row["predict_starts"]) if isinstance(row.get("predict_starts"), str) else []
    entry = {
        "spectrum": _spectrum(row.get("predict_spectrum")),
        "half_spectra": halves if all(h is not None for h in halves) else None,
        "starts": [{"residual": r, "spectrum": sp} for r, sp in starts],
        "residual_share": _number(row.get("predict_residual_share")),
        "iterations": _number(row.get("predict_iterations")),
    }
    return causal_signals(entry, float(row["predict_rank"]))


def _number(value) -> float | None:
    return None if value is None or pd.isna(value) else float(value)


#: the answers compared on the tuning heads: energy ranks of the fit's spectrum, and the fit's
#: own knee (the least rank of its truncation within a share of the ablation's residual)
CANDIDATES = (
    "energy_0.9",
    "energy_0.95",
    "energy_0.99",
    "fit_knee_0.01",
    "fit_knee_0.05",
    "held_out_knee_0.01",
    "held_out_knee_0.05",
    "held_out_knee_0.1",
)


def candidate_answers(row: pd.Series) -> dict:
    """Each of :data:`CANDIDATES` on one head's predict row (NaN where not measured)."""
    from entropic_bound.predict.causal import fit_knee

    out = dict.fromkeys(CANDIDATES, np.nan)
    s = _spectrum(row.get("predict_spectrum"))
    if s is not None:
        for name in CANDIDATES[:3]:
            out[name] = _rank(s, name)
    for column, names in (
        ("predict_truncation", CANDIDATES[3:5]),
        ("predict_held_out", CANDIDATES[5:]),
    ):
        curve = _spectrum(row.get(column))
        if curve is not None and len(curve):
            for name in names:
                out[name] = float(fit_knee(curve, float(name.rsplit("_", 1)[1])))
    return out


#: :func:`promises`' columns before the constant's
TABLE_COLUMNS = [
    "model",
    "layer",
    "head",
    "eligible",
    "knee",
    "truth",
    "answer",
    "word",
    "holds",
    "under",
    "error",
    *SIGNALS,
    *(f"answer_{k}" for k in CANDIDATES),
]


def promises(predict: pd.DataFrame, truth: str = "knee_inputs_metric") -> pd.DataFrame:
    """One row per head: model, layer, head, eligible, the knees, answer, word, the signals,
    ``holds`` (True/False; None where the word promises nothing), ``under`` (answer below the
    truth), the answer's distance from the truth read with its word, and the model-median
    constant's (over every head of the model with a knee, its own included)."""
    rows = []
    for _, row in predict.iterrows():
        knee = float(row[truth])
        floor = float(row.get("predict_floor", np.nan))
        word, answer = row["predict_confidence"], float(row["predict_rank"])
        rows.append(
            {
                "model": row["model"],
                "layer": int(row["layer"]),
                "head": int(row["head"]),
                "eligible": bool(row["eligible"]),
                "knee": float(row["knee"]),
                "truth": knee,
                "answer": answer,
                "word": word,
                "holds": word_holds(word, answer, floor, knee, 1) if np.isfinite(knee) else None,
                "under": bool(answer < knee) if np.isfinite(knee) else None,
                "error": range_error(word, answer, floor, knee),
                **head_signals(row),
                **{f"answer_{k}": v for k, v in candidate_answers(row).items()},
                "held_out_curve": row.get("predict_held_out"),
            }
        )
    out = pd.DataFrame(rows, columns=TABLE_COLUMNS) if not rows else pd.DataFrame(rows)
    out["constant"] = out.groupby("model")["truth"].transform("median")
    out["constant_error"] = (out["constant"] - out["truth"]).abs()
    out["point_error"] = (out["answer"] - out["truth"]).abs()
    return out


def auc(wrong: np.ndarray, right: np.ndarray) -> float:
    """P(a wrong head's signal > a right head's) + ½ P(tie): 1 separates perfectly in the
    signal's direction, ½ not at all (NaN without both groups)."""
    wrong, right = np.asarray(wrong, float), np.asarray(right, float)
    wrong, right = wrong[np.isfinite(wrong)], right[np.isfinite(right)]
    if not len(wrong) or not len(right):
        return float("nan")
    diff = wrong[:, None] - right[None, :]
    return float(np.mean(diff > 0) + 0.5 * np.mean(diff == 0))


#: what makes an answer wrong, for :func:`separations`: below the truth (an "upper bound" broken),
#: or more than one from it
WRONG = {
    "under": lambda t: t["answer"] < t["truth"],
    "off_by_more_than_1": lambda t: (t["answer"] - t["truth"]).abs() > 1,
}


def separations(table: pd.DataFrame) -> pd.DataFrame:
    """:func:`separation` on the eligible heads for each reading of :data:`WRONG`."""
    keep = table[table["eligible"]]
    parts = [separation(keep, rule(keep)).assign(wrong=name) for name, rule in WRONG.items()]
    out = pd.concat(parts, ignore_index=True)
    return out[["wrong", *(c for c in out.columns if c != "wrong")]]


def separation(table: pd.DataFrame, wrong: pd.Series) -> pd.DataFrame:
    """For every signal: its AUC between the heads ``wrong`` marks and the others, the medians
    of each group and the largest value among the right heads (a threshold below it would
    refuse a right answer)."""
    rows = []
    wrong = wrong.astype(bool)
    for sig in SIGNALS:
        w, r = table.loc[wrong, sig].to_numpy(float), table.loc[~wrong, sig].to_numpy(float)
        rows.append(
            {
                "signal": sig,
                "auc": auc(w, r),
                "wrong_heads": int(np.isfinite(w).sum()),
                "right_heads": int(np.isfinite(r).sum()),
                "wrong_median": float(np.nanmedian(w)) if np.isfinite(w).any() else np.nan,
                "right_median": float(np.nanmedian(r)) if np.isfinite(r).any() else np.nan,
                "wrong_min": float(np.nanmin(w)) if np.isfinite(w).any() else np.nan,
                "right_max": float(np.nanmax(r)) if np.isfinite(r).any() else np.nan,
            }
        )
    return pd.DataFrame(rows)


#: the predict registration's verdict table's columns
VERDICT_COLUMNS = [
    "test",
    "check",
    "value",
    "sense",
    "threshold",
    "heads",
    "passed",
    "verdict",
    "note",
]


def evaluate(table: pd.DataFrame, reg: dict) -> pd.DataFrame:
    """A predict registration's verdicts on :func:`promises`' table (docs/method.md §9f): over
    the eligible heads, **W1** no word breaks its promise (and the count of heads with one);
    **W2** the answer (the rank itself: a range would win by being wide) beats the model-median
    constant: one-sided exact Wilcoxon signed-rank of |constant − truth| − |answer − truth|
    (zeros dropped), p ≤ alpha; **W3** a
    promise on at least ``min_promised_share`` of the eligible heads. Each verdict is
    ``inconclusive`` under ``min_eligible_heads``; Holm's family is W2's p alone."""
    if reg is None:
        return pd.DataFrame(columns=VERDICT_COLUMNS)
    keep = table[table["eligible"]]
    n = len(keep)
    enough = n >= reg["min_eligible_heads"]
    promised = keep["holds"].dropna()
    broken = int((~promised.astype(bool)).sum())
    _, p = wilcoxon_greater((keep["constant_error"] - keep["point_error"]).to_numpy(float))
    share = len(promised) / n if n else 0.0
    t = reg["tests"]
    checks = [
        ("W1", "words broken", broken, "<=", t["W1"]["max_broken"], f"{len(promised)} promised"),
        ("W2", "p", p, "<=", reg["alpha"], "against the model's median knee"),
        ("W3", "share with a promise", share, ">=", t["W3"]["min_promised_share"], ""),
    ]
    rows = []
    for test, check, value, sense, threshold, note in checks:
        passed = holds(float(value), sense, float(threshold))
        verdict = ("supported" if passed else "not supported") if enough else "inconclusive"
        rows.append(
            {
                "test": test,
                "check": check,
                "value": float(value),
                "sense": sense,
                "threshold": float(threshold),
                "heads": n,
                "passed": bool(passed),
                "verdict": verdict,
                "note": note,
            }
        )
    return pd.DataFrame(rows, columns=VERDICT_COLUMNS)


def promises_markdown(table, sep, verdicts, reg) -> str:
    """The study page's section on predict's words: what each promised and kept, the answer
    against the model-median constant, each signal's separation, the verdicts (or none)."""
    keep = table[table["eligible"]]
    lines = ["## predict's words against their promises (docs/method.md §9f)", ""]
    if not len(keep):
        return "\n".join([*lines, "No eligible head was predicted.", ""])
    promised = keep["holds"].dropna().astype(bool)
    lines += [
        f"{len(keep)} eligible heads; truth: {reg['truth'] if reg else 'knee_inputs_metric'}. "
        f"Words: {keep['word'].value_counts().to_dict()}; {len(promised)} promise something, "
        f"{int((~promised).sum())} broken. Mean |error| {keep['point_error'].mean():.2f} against the "
        f"model-median constant's {keep['constant_error'].mean():.2f}; the answer is below the "
        f"truth on {int(keep['under'].sum())}.",
        "",
        "Each candidate answer's mean |error| on these heads (exploratory): "
        + ", ".join(
            f"{k} {(keep[f'answer_{k}'] - keep['truth']).abs().mean():.2f}" for k in CANDIDATES
        )
        + ".",
        "",
        "### Signals: how well each tells wrong answers from right ones (AUC; ½ is none)",
        "",
        markdown_table(sep.round(3)),
        "",
    ]
    if verdicts is None or not len(verdicts):
        lines += ["No registration was named: exploratory, no verdict.", ""]
    else:
        lines += [f"### Registration {reg['name']} ({reg['registered']})", ""]
        lines += [markdown_table(verdicts), ""]
    return "\n".join(lines)
