"""The heads study's summary (docs/method.md §9, exploratory: reported, no verdict): how
often each estimator of each spectrum names a head's truncation knee, against what a guess that
knows nothing of the head names (:mod:`.baselines`), on every head with a knee and on the heads
whose knee is resolved (:mod:`.reliability`); the knee's own reliability; the page.

Agreement on a set of heads: ``exact`` the share with round(estimate) = knee
(:func:`core.estimators.round_rank`), ``within1`` with |round − knee| ≤ 1, ``mae`` the mean
|estimate − knee|, ``spearman`` the rank correlation across heads, ``not_applicable`` the heads
whose estimate is NaN (the floor-aware rank where a spectrum has no floor); then, for each null
guess, the paired comparison (:func:`.baselines.paired`): ``<null>_mae`` the guess's mean
|error| on the same heads, ``<null>_wins``/``_losses``/``_ties`` and the one-sided p-values.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from entropic_bound.analysis.columns import spearman
from entropic_bound.core.estimators import round_rank
from entropic_bound.heads.baselines import NULLS, null_guesses, paired
from entropic_bound.heads.ranks import SPECTRA, estimator_columns

#: what each spectrum is, in the summary's words
SPECTRUM_LABELS = {
    "qk": "(a) learned W_Qᵀ W_K",
    "logit": "(b) logit energy field (median over sequences)",
    "pattn": "(c) P_attn, data only",
    "predict": "(e) entropic-bound predict, causal",
    "null": "null guess (other heads' knees)",
}
#: arXiv 2604.04384's ranges over 5,888 heads of five language models (the anchor)
ANCHOR = {"logit_energy_0.9": (2, 11), "qk_energy_0.9": (38, 75)}
#: the sets of heads an agreement is read on: every head with a knee, the resolved ones, the
#: registration's eligible ones (when the table says)
HEAD_SETS = ("with_knee", "resolved", "eligible")
#: the paired columns of each null
PAIRED = ("mae_null", "wins", "losses", "ties", "p_sign", "p_wilcoxon")


def estimate_columns(table: pd.DataFrame, taus) -> list[tuple[str, str, str]]:
    """(spectrum, estimator, column) of every estimate the table holds: the three spectra's,
    then predict's rank when measured."""
    cols = [(s, e, f"{s}_{e}") for s in SPECTRA for e in estimator_columns(taus)]
    if "predict_rank" in table.columns:
        cols.append(("predict", "rank", "predict_rank"))
    return cols


def _agreement_row(values: pd.Series, knee: pd.Series) -> dict:
    ok = np.isfinite(values) & np.isfinite(knee)
    v, k = values[ok], knee[ok]
    diff = round_rank(v) - k
    return {
        "heads": int(ok.sum()),
        "not_applicable": int((~np.isfinite(values) & np.isfinite(knee)).sum()),
        "exact": float((diff == 0).mean()) if ok.any() else np.nan,
        "within1": float((np.abs(diff) <= 1).mean()) if ok.any() else np.nan,
        "mae": float(np.abs(v - k).mean()) if ok.any() else np.nan,
        "spearman": spearman(v, k) if ok.sum() >= 3 else np.nan,
    }


def agreement(table: pd.DataFrame, taus, model: str | None = None) -> pd.DataFrame:
    """One row per (head set, spectrum or null, estimator): the agreement and the paired
    comparisons with every null (module docstring). ``model``: the column naming each head's
    model when ``table`` holds several (the nulls read only a head's own model); the resolved
    set needs ``knee_resolved`` (:func:`.reliability.reliability`) and the eligible set
    ``eligible`` (:func:`.claims.eligible`), else they are left out."""
    guesses = null_guesses(table, model)
    columns = [(s, e, table[c]) for s, e, c in estimate_columns(table, taus)]
    columns += [("null", n, guesses[n]) for n in NULLS]
    sets = {"with_knee": np.isfinite(table["knee"])}
    if "knee_resolved" in table.columns:
        sets["resolved"] = sets["with_knee"] & table["knee_resolved"].astype(bool)
    if "eligible" in table.columns:  # a registration's eligibility (heads/claims.py)
        sets["eligible"] = sets["with_knee"] & table["eligible"].astype(bool)
    rows = []
    for set_name, keep in sets.items():
        knee = table["knee"][keep]
        for spectrum, est, values in columns:
            row = {"set": set_name, "spectrum": spectrum, "estimator": est}
            row["column"] = est if spectrum == "null" else f"{spectrum}_{est}"
            row |= _agreement_row(values[keep], knee)
            for null in NULLS:
                if spectrum == "null" and est == null:
                    row |= {f"{null}_{k}": np.nan for k in PAIRED}
                    continue
                p = paired(values[keep], guesses[null][keep], knee)
                row |= {f"{null}_{k}": p[k] for k in PAIRED}
            rows.append(row)
    return pd.DataFrame(rows)


#: other shares of the gap, to see how much the knee moves with the rule's 1 % (a reading, not
#: a second rule)
SENSITIVITY_FRACTIONS = (0.005, 0.01, 0.02, 0.05)


def knee_sensitivity(table: pd.DataFrame, curves: pd.DataFrame, fractions) -> pd.DataFrame:
    """Each head's knee at each share ``fractions`` of its gap, from its truncation curve
    (``curves``: layer, head, r, delta = L(r) − L_full): columns knee_<fraction>."""
    out = table[["layer", "head", "gap"]].copy()
    for f in fractions:
        knees = []
        for row in out.itertuples(index=False):
            c = curves[(curves["layer"] == row.layer) & (curves["head"] == row.head)]
            ok = c.loc[c["delta"] <= f * row.gap, "r"] if row.gap > 0 else c["r"].iloc[:0]
            knees.append(float(ok.min()) if len(ok) else np.nan)
        out[f"knee_{f:g}"] = knees
    return out


def reliability_summary(table: pd.DataFrame) -> dict:
    """The knee's reliability over the heads with a knee: split halves (exact and within ±1
    agreement, their Spearman), how many ranks the bootstrap interval spans, resolved heads."""
    has = table[np.isfinite(table["knee"])]
    a, b = has["knee_half_a"], has["knee_half_b"]
    both = np.isfinite(a) & np.isfinite(b)
    spans = (has["knee_boot_hi"] - has["knee_boot_lo"] + 1).dropna().astype(int)
    return {
        "heads": len(has),
        "split_exact": int((a[both] == b[both]).sum()),
        "split_within1": int(((a[both] - b[both]).abs() <= 1).sum()),
        "split_spearman": spearman(a[both], b[both]) if both.sum() >= 3 else np.nan,
        "boot_spans": {int(k): int(v) for k, v in spans.value_counts().sort_index().items()},
        "boot_undefined": int(has["knee_boot_hi"].isna().sum()),
        "resolved": int(has["knee_resolved"].astype(bool).sum()),
        "smallest_slack": float(has["knee_slack"].min()) if len(has) else np.nan,
    }


def _versus(r, null: str) -> str:
    """``wins–losses–ties (p)`` of row ``r`` against ``null`` (— for the null itself)."""
    p = getattr(r, f"{null}_p_wilcoxon")
    if r.heads == 0 or not np.isfinite(p):
        return "—"
    w, lo, t = (int(getattr(r, f"{null}_{k}")) for k in ("wins", "losses", "ties"))
    return f"{w}–{lo}–{t} ({p:.2g})"


def baseline_markdown(agree: pd.DataFrame, set_name: str = "with_knee") -> str:
    """Each estimator against the nulls (the table of docs/results.md): its agreement, then
    wins–losses–ties (one-sided Wilcoxon p) against each null on its absolute error."""
    a = agree[agree["set"] == set_name]
    lines = [
        "| spectrum | estimator | heads | n/a | exact | within ±1 | mean abs. error | Spearman | "
        + " | ".join(f"vs {n}" for n in NULLS)
        + " |",
        "|---|---|---|---|---|---|---|---|" + "---|" * len(NULLS),
    ]
    for r in a.itertuples(index=False):
        n = r.heads
        cells = (
            [f"{round(r.exact * n)}/{n}", f"{round(r.within1 * n)}/{n}", f"{r.mae:.2f}"]
            if n
            else ["—", "—", "—"]
        )
        cells.append(f"{r.spearman:.2f}" if np.isfinite(r.spearman) else "—")
        cells += [_versus(r, null) for null in NULLS]
        lines.append(
            f"| {r.spectrum} | {r.estimator} | {n} | {r.not_applicable} | "
            + " | ".join(cells)
            + " |"
        )
    return "\n".join(lines)


def summary_markdown(
    table: pd.DataFrame, agree: pd.DataFrame, facts: dict, sensitivity: pd.DataFrame | None = None
) -> str:
    """The study in a page: corpus, model, training, the per-head table, the knee's
    reliability, the agreement against the nulls."""
    c, s = facts["corpus"], facts["shape"]
    name = (
        f"Python {facts['python']} standard library sources (PSF License)"
        if c.get("source", "stdlib") == "stdlib"
        else "the system's manual pages (troff)"
    )
    lines = [
        "# Real heads, measured (exploratory: reported, no verdict; docs/method.md §9)",
        "",
        f"Corpus: {name}, {c['files_train']} + {c['files_valid']} files, "
        f"{c['bytes_train']:,} + {c['bytes_valid']:,} bytes (train + validation), sha256 "
        f"{c['sha256'][:12]}"
        + (f", held-out sha256 {c['valid_sha256'][:12]}" if c.get("valid_sha256") else "")
        + ".",
        f"Model: {s['layers']} layers × {s['heads']} heads, d_head {s['d_head']}, d_model "
        f"{s['heads'] * s['d_head']}, context {s['context']}, {facts['parameters']:,} "
        f"parameters; trained {facts.get('steps_run', '?')} steps, {facts['train_wall_s']:.0f} s "
        f"wall ({facts['train_cpu_s']:.0f} s CPU) on {facts['device']} with "
        f"{facts['threads']} thread(s); validation loss {facts['valid_loss']:.4f} nats/byte.",
        "",
        f"Heads with a knee (ablation gap > 0): {int(np.isfinite(table['knee']).sum())} of "
        f"{len(table)}.",
        "",
        "## Per head",
        "",
        markdown_table(table.round(3)),
        "",
    ]
    if "knee_resolved" in table.columns:
        r = reliability_summary(table)
        lines += [
            "## The knee's reliability",
            "",
            f"Split halves of the knee windows give the same knee on {r['split_exact']} of "
            f"{r['heads']} heads, within ±1 on {r['split_within1']} (Spearman "
            f"{r['split_spearman']:.2f}); the bootstrap's interval spans "
            + ", ".join(f"{k} rank(s) on {v}" for k, v in r["boot_spans"].items())
            + f" (undefined on {r['boot_undefined']}); resolved: {r['resolved']} of "
            f"{r['heads']}; smallest slack under the threshold {r['smallest_slack']:.2g} "
            "nats/byte.",
            "",
        ]
    if sensitivity is not None:
        lines += [
            "## The knee at other shares of the gap (a reading; the rule is 1 %)",
            "",
            markdown_table(sensitivity.drop(columns="gap")),
            "",
        ]
    for set_name in agree["set"].unique():
        lines += [
            f"## Which estimator names the knee, against the constant ({set_name})",
            "",
            baseline_markdown(agree, set_name),
            "",
        ]
    lines.append(
        "Anchor (arXiv 2604.04384): the logit energy field reaches 90 % of its variance in "
        "2–11 components; the learned W_Qᵀ W_K needs 38–75 of d_h ∈ {64, 128}. Here: "
        + "; ".join(
            f"{col} {table[col].min():g}–{table[col].max():g} of {int(table['d_head'].iloc[0])}"
            for col in ANCHOR
        )
        + "."
    )
    return "\n".join(lines) + "\n"


def markdown_table(df: pd.DataFrame) -> str:
    """A table as markdown (floats as %g)."""
    head = "| " + " | ".join(map(str, df.columns)) + " |"
    rule = "|" + "---|" * len(df.columns)
    body = [
        "| " + " | ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in r) + " |"
        for r in df.itertuples(index=False)
    ]
    return "\n".join([head, rule, *body])
