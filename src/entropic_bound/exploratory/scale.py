"""Verdict by scale (docs/method.md §8, exploratory: reported, no verdict of its own).

The paper grid is run at several d = n, each through the normal pipeline into its own
``results/<run_name>/`` (config/scale/scales.yaml lists the configs). This module reads those
runs' cached tables and tabulates, per claim and d, the run's verdict (from its claims.csv,
computed by the claims: never recomputed here) and its **headline number**, which each claim emits
itself into claims.csv (quantity, value, threshold, denominator), for every registration.

The headline **margin** puts every claim on one axis: (value − threshold) / threshold when the
check is "value ≥ threshold", (threshold − value) / threshold when it is "value ≤ threshold", so a
margin ≥ 0 means the headline check passes, and −1 means a rate of 0 against a ≥ threshold.
A claim is a conjunction of checks: its verdict can fail on a check other than the headline one
(the table shows both, and the verdict is the run's own).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

#: the table of a run the scale study reads, under results/<run_name>/tables/: each claim emits its
#: own verdict and headline number there (claims/verdict.py), so nothing is recomputed here
HEADLINE_TABLES = ("claims.csv",)
COLUMNS = [
    "registration",
    "claim",
    "d",
    "verdict",
    "headline",
    "value",
    "sense",
    "threshold",
    "n",
    "margin",
]


@dataclass(frozen=True)
class Headline:
    text: str
    value: float
    sense: str  # ">=", "<=" (or the strict "<" of v1's C9 noisy check)
    threshold: float

    @property
    def margin(self) -> float:
        if not np.isfinite(self.value) or self.threshold == 0 or not self.sense:
            return float("nan")
        m = (self.value - self.threshold) / abs(self.threshold)
        return m if self.sense.startswith(">") else -m


def read_run_tables(run_dir) -> dict[str, pd.DataFrame]:
    """The tables of one run that the scale table reads; ValueError naming an absent one."""
    tables = {}
    for name in HEADLINE_TABLES:
        path = Path(run_dir) / "tables" / name
        if not path.exists():
            raise ValueError(f"run {run_dir} lacks tables/{name}; run its reproduce-all first")
        tables[name.removesuffix(".csv")] = pd.read_csv(path)
    return tables


def scale_rows(d: int, tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Rows of one run: every registration × claim with its verdict and its headline, as the
    claim itself wrote them into claims.csv (a run written before the registration column had
    only v1)."""
    claims = tables["claims"]
    if "registration" not in claims:
        claims = claims.assign(registration="v1")
    rows = []
    for r in claims.itertuples(index=False):
        sense = getattr(r, "headline_sense", None)
        sense = sense if isinstance(sense, str) else ""
        h = Headline(
            str(getattr(r, "headline", "") or ""),
            float(getattr(r, "headline_value", np.nan)),
            sense,
            float(getattr(r, "headline_threshold", np.nan)),
        )
        rows.append(
            {
                "registration": r.registration,
                "claim": r.claim,
                "d": d,
                "verdict": r.verdict,
                "headline": h.text,
                "value": h.value,
                "sense": sense,
                "threshold": h.threshold,
                "n": float(getattr(r, "headline_n", np.nan)),
                "margin": h.margin,
            }
        )
    return pd.DataFrame(rows, columns=COLUMNS)


def verdict_by_scale(runs: dict[int, dict[str, pd.DataFrame]]) -> pd.DataFrame:
    """The long table registration × claim × d of every run (runs: d -> its tables)."""
    parts = [scale_rows(d, runs[d]) for d in sorted(runs)]
    out = pd.concat(parts, ignore_index=True)
    return out.sort_values(["registration", "claim", "d"], kind="stable").reset_index(drop=True)


def scale_markdown(table: pd.DataFrame) -> str:
    """Claim × d grids, one per registration: verdict and headline value per cell
    (exploratory, no verdict of its own)."""
    ds = sorted(table["d"].unique())
    lines = [
        "Verdict by scale (exploratory: no verdict of its own; each cell is that run's verdict "
        "and the claim's own headline value, threshold in the last column).",
        "",
    ]
    for reg, part in table.groupby("registration", sort=True):
        lines += [
            f"**Registration {reg}**",
            "",
            "| claim | headline | " + " | ".join(f"d = {d}" for d in ds) + " | threshold |",
            "|---|---|" + "---|" * len(ds) + "---|",
        ]
        for claim, g in part.groupby("claim", sort=True):
            cells = []
            for d in ds:
                r = g[g["d"] == d]
                if r.empty:
                    cells.append("not run")
                    continue
                r = r.iloc[0]
                word = "✓" if r["verdict"] == "reproduced" else f"**{r['verdict']}**"
                value = "" if not np.isfinite(r["value"]) else f" {r['value']:.3g}"
                cells.append(f"{word}{value}")
            first = g.dropna(subset=["value"]).iloc[0] if g["value"].notna().any() else g.iloc[0]
            limit = (
                ""
                if not np.isfinite(first["threshold"])
                else f"{first['sense']} {first['threshold']:g}"
            )
            headline = str(first["headline"]).replace("|", "\\|")  # a bar inside a cell
            lines.append(f"| {claim} | {headline} | " + " | ".join(cells) + f" | {limit} |")
        lines.append("")
    return "\n".join(lines)


def figure_scale(table: pd.DataFrame):
    """Headline margin of each claim against d (log₂ axis); hollow markers: not reproduced."""
    import matplotlib as mpl
    import seaborn as sns
    from matplotlib.figure import Figure

    table = table[table["registration"] == table["registration"].max()]  # the latest
    claims = sorted(table["claim"].unique())
    colors = sns.color_palette("colorblind", max(len(claims), 3)) + sns.color_palette(
        "dark", max(len(claims) - 10, 1)
    )
    with mpl.rc_context({"font.size": 9, "pdf.fonttype": 42, "svg.hashsalt": "entropic-bound"}):
        fig = Figure(figsize=(6.4, 3.8), layout="constrained")
        ax = fig.subplots()
        # symlog keeps −1 (a failing rate) and 1000 (a risk far below ε) on one readable axis
        ax.set_yscale("symlog", linthresh=1.0)
        ax.axhline(0, color="0.3", lw=0.8, ls="--")
        for i, claim in enumerate(claims):
            g = table[table["claim"] == claim].sort_values("d").copy()
            # dodge: claims with equal margins (rates of 1 against 0.9) would hide each other
            g["d"] = g["d"] * 2 ** (0.03 * (i - (len(claims) - 1) / 2))
            ax.plot(g["d"], g["margin"], "-", color=colors[i], lw=1, label=claim)
            ok = g["verdict"] == "reproduced"
            ax.scatter(g.loc[ok, "d"], g.loc[ok, "margin"], color=colors[i], s=18, zorder=3)
            ax.scatter(
                g.loc[~ok, "d"],
                g.loc[~ok, "margin"],
                facecolor="white",
                edgecolor=colors[i],
                s=22,
                zorder=3,
            )
        ax.set_xscale("log", base=2)
        ds = sorted(table["d"].unique())
        ax.set_xticks(ds, [str(d) for d in ds])
        ax.set_xlabel("d = n (token dimension = tokens per sequence)")
        ax.set_ylabel("headline margin (relative to threshold; ≥ 0 passes)")
        ax.set_title(
            f"Verdict by scale, registration {table['registration'].max()} (exploratory): "
            "hollow = not reproduced at that d",
            fontsize=8,
        )
        fig.legend(loc="outside right center", frameon=False, title="claim")
    return fig
