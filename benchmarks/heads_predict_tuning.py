"""Each candidate answer of ``predict``'s causal fit, and each signal beside it, on a heads
study's eligible heads (docs/method.md §9f): the tuning table read on H1's heads only.

    python benchmarks/heads_predict_tuning.py results/heads_study/tables/promises.csv
    python benchmarks/heads_predict_tuning.py FILE --out benchmarks/results/NAME.md

Per candidate (heads.promises.CANDIDATES): mean |answer − truth|, the shares within ±1, below
and above the truth, and the one-sided exact Wilcoxon p that it beats the model-median constant;
then, per candidate, each signal's AUC between the heads it puts below the truth and the others.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from entropic_bound.heads.promises import CANDIDATES, SIGNALS, auc  # noqa: E402
from entropic_bound.heads.report import markdown_table  # noqa: E402
from entropic_bound.heads.stats import wilcoxon_greater  # noqa: E402


def candidates(keep: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for name in CANDIDATES:
        err = keep[f"answer_{name}"] - keep["truth"]
        _, p = wilcoxon_greater((keep["constant_error"] - err.abs()).to_numpy(float))
        rows.append(
            {
                "answer": name,
                "mean_abs_error": err.abs().mean(),
                "within_1": (err.abs() <= 1).mean(),
                "below": (err < 0).mean(),
                "above": (err > 0).mean(),
                "p_beats_constant": p,
            }
        )
    const = keep["constant_error"]
    rows.append(
        {
            "answer": "model-median constant",
            "mean_abs_error": const.mean(),
            "within_1": (const <= 1).mean(),
            "below": (keep["constant"] < keep["truth"]).mean(),
            "above": (keep["constant"] > keep["truth"]).mean(),
            "p_beats_constant": np.nan,
        }
    )
    return pd.DataFrame(rows)


#: the held-out knee's tolerance, swept (the registered knee's own is 0.01)
FRACTIONS = (0.01, 0.02, 0.03, 0.05, 0.1)


def held_out_sweep(table: pd.DataFrame) -> pd.DataFrame:
    """The held-out knee at each of :data:`FRACTIONS` (from each head's recorded curve)."""
    import json

    from entropic_bound.predict.causal import fit_knee

    out = {}
    for f in FRACTIONS:
        out[f"held_out_{f}"] = [
            float(fit_knee(json.loads(c), f)) if isinstance(c, str) else np.nan
            for c in table["held_out_curve"]
        ]
    return pd.DataFrame(out, index=table.index)


def word_rules(keep: pd.DataFrame, answer: str, wide: str | None = None) -> pd.DataFrame:
    """For one answer column, each word (upper bound: answer ≥ truth; lower bound: ≤) given where
    one signal is at most (or at least) a threshold: the largest coverage with no broken promise
    on these heads, and the threshold (midway to the first value that would break one)."""
    rows = []
    a, truth = keep[answer], keep["truth"]
    words = [("upper bound", a >= truth), ("lower bound", a <= truth), ("exact", a == truth)]
    if wide is not None:  # the range between the answer and another reading of it
        lo, hi = np.minimum(a, keep[wide]), np.maximum(a, keep[wide])
        words.append((f"between {answer} and {wide}", (lo <= truth) & (truth <= hi)))
    for word, ok in words:
        for sig in SIGNALS:
            v = keep[sig].to_numpy(float)
            for sense in ("<=", ">="):
                order = np.argsort(v if sense == "<=" else -v, kind="stable")
                good = ok.to_numpy()[order]
                vals = v[order]
                bad = np.flatnonzero(~good | ~np.isfinite(vals))
                k = int(bad[0]) if len(bad) else len(good)
                while k > 0 and k < len(vals) and vals[k - 1] == vals[k]:
                    k -= 1  # a tie with the first broken value cannot be split
                cut = (
                    (vals[k - 1] + vals[k]) / 2
                    if 0 < k < len(vals)
                    else (vals[k - 1] if k else np.nan)
                )
                rows.append(
                    {
                        "word": word,
                        "signal": sig,
                        "sense": sense,
                        "covered": k,
                        "of": len(vals),
                        "threshold": cut,
                    }
                )
    return pd.DataFrame(rows).sort_values("covered", ascending=False)


def signals(keep: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for name in CANDIDATES:
        under = (keep[f"answer_{name}"] < keep["truth"]).to_numpy()
        row = {"answer": name, "below": int(under.sum())}
        for sig in SIGNALS:
            v = keep[sig].to_numpy(float)
            row[sig] = auc(v[under], v[~under])
        rows.append(row)
    return pd.DataFrame(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("promises", type=Path)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    table = pd.read_csv(args.promises)
    if "held_out_curve" in table:
        table = pd.concat([table, held_out_sweep(table)], axis=1)
    keep = table[table["eligible"].astype(bool)]
    sweep = [c for c in table.columns if c.startswith("held_out_0")]
    errs = {c: (keep[c] - keep["truth"]).abs().mean() for c in sweep}
    text = "\n".join(
        [
            f"# predict's candidate answers on {len(keep)} eligible heads ({args.promises})",
            "",
            markdown_table(candidates(keep).round(4)),
            "",
            "## AUC of each signal: heads the candidate puts below the truth against the others",
            "",
            markdown_table(signals(keep).round(3)),
            "",
            "## The held-out knee by tolerance: mean |error| on these heads",
            "",
            ", ".join(f"{c}: {e:.3f}" for c, e in errs.items()),
            "",
            "## Word rules for predict's answer (most heads covered with none broken)",
            "",
            markdown_table(word_rules(keep, "answer").head(8).round(4)),
            "",
            *(
                part
                for col in sweep
                for part in (
                    f"### For {col} (the range: to held_out_0.01)",
                    "",
                    markdown_table(word_rules(keep, col, "held_out_0.01").head(8).round(4)),
                    "",
                )
            ),
        ]
    )
    print(text)
    if args.out:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
