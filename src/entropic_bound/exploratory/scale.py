"""Verdict by scale (docs/method.md §8, exploratory: reported, no verdict of its own).

The paper grid is run at several d = n, each through the normal pipeline into its own
``results/<run_name>/`` (config/scale/scales.yaml lists the configs). This module reads those
runs' cached tables and tabulates, per claim and d, the run's verdict (from its claims.csv,
computed by claims.py: never recomputed here) and one **headline number**: the quantity of the
claim's most telling check, beside its pre-registered threshold from config/claims.yaml.

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

#: tables of a run the headlines read, under results/<run_name>/tables/
HEADLINE_TABLES = (
    "claims.csv",
    "risk_curves.csv",
    "learned_ranks.csv",
    "data_only_predictions.csv",
    "T2_intrinsic_ranks.csv",
    "T3_estimators.csv",
    "T4_frontier.csv",
)
COLUMNS = ["claim", "d", "verdict", "headline", "value", "sense", "threshold", "margin"]


@dataclass(frozen=True)
class Headline:
    text: str
    value: float
    sense: str  # ">=" or "<="
    threshold: float

    @property
    def margin(self) -> float:
        if not np.isfinite(self.value) or self.threshold == 0:
            return float("nan")
        m = (self.value - self.threshold) / abs(self.threshold)
        return m if self.sense == ">=" else -m


def _rate(mask: pd.Series) -> float:
    return float(mask.mean()) if len(mask) else float("nan")


def headlines(t: dict[str, pd.DataFrame], claims: dict) -> dict[str, Headline]:
    """One headline per claim from a run's tables (keys: file stems of HEADLINE_TABLES)."""
    est = claims["estimator"]
    rc = t["risk_curves"]
    trained = rc[(rc["student_class"] == rc["rung"]) & ~rc["static_student"].astype(bool)]
    l0 = trained[trained["rung"] == "L0"]
    deficient = l0[(l0["rank"] < l0["r_star"]) & (l0["R_theory"] > 0)]
    at_knee = l0[l0["rank"] == l0["r_star"]]
    lr = t["learned_ranks"]
    lr = lr[(lr["estimator"] == est)]
    dop = t["data_only_predictions"]
    ps = dop[(dop["predictor"] == "P_static") & (dop["estimator"] == est)]
    t2 = t["T2_intrinsic_ranks"]
    t2 = t2[t2["sigma"] == 0]
    t3 = t["T3_estimators"]
    t3 = t3[t3["kernels"].str.startswith("learned") & (t3["estimator"] == est)]
    t4 = t["T4_frontier"]
    c9 = claims["C9"]
    inv = t4[
        (t4["predictor"] == "P_invert")
        & (t4["estimator"] == est)
        & np.isclose(t4["sigma"], c9["noisy_sigma_invert"])
        & (t4["beta"] <= c9["max_beta_invert"])
    ]
    attention = claims["C5"]["rungs"]
    # C4's headline is its noisy-copy check, the harder of its two (at d = 64 the one that fails)
    l0_noisy = ps[(ps["class"] == "L0") & np.isclose(ps["sigma"], claims["C4"]["noisy_sigma"])]
    static_rungs = t2[t2["rung"].isin(["L0", "L1", "L2"])]
    return {
        "C1": Headline(
            "L0 min R/R* over r < r*",
            float((deficient["R"] / deficient["R_theory"]).min()) if len(deficient) else np.nan,
            ">=",
            claims["C1"]["min_ratio_to_theory"],
        ),
        "C2": Headline(
            "L0 max R(r*)",
            float(at_knee["R"].max()) if len(at_knee) else np.nan,
            "<=",
            claims["C2"]["max_risk"],
        ),
        "C3": Headline(
            "L0 learned r_E = r* rate",
            _rate(lr.loc[lr["rung"] == "L0", "r_hat"] == lr.loc[lr["rung"] == "L0", "r_star"]),
            ">=",
            claims["C3"]["min_exact_rate"],
        ),
        "C4": Headline(
            f"P_static = r* rate on L0 copies at σ = {claims['C4']['noisy_sigma']:g}",
            _rate(l0_noisy["r_hat"] == l0_noisy["r_star"]),
            ">=",
            claims["C4"]["min_exact_rate_noisy"],
        ),
        "C5": Headline(
            "P_static ≠ r* rate on " + ", ".join(attention),
            _rate(
                ps.loc[ps["class"].isin(attention) & (ps["sigma"] == 0), "r_hat"]
                != ps.loc[ps["class"].isin(attention) & (ps["sigma"] == 0), "r_star"]
            ),
            ">=",
            claims["C5"]["min_mismatch_rate"],
        ),
        "C6": Headline(
            "P_static = r_emp = r* rate on L0–L2",
            _rate(
                (static_rungs["P_static"] == static_rungs["r_emp"])
                & (static_rungs["r_emp"] == static_rungs["r_star"])
            ),
            ">=",
            claims["C6"]["min_match_rate_static_rungs"],
        ),
        "C7": Headline(
            "L4 r_emp = r* rate",
            _rate(t2.loc[t2["rung"] == "L4", "r_emp"] == t2.loc[t2["rung"] == "L4", "r_star"]),
            ">=",
            claims["C7"]["min_exact_rate"],
        ),
        "C8": Headline(
            f"{est} exact rate on learned {claims['C8']['rung']}",
            float(t3.loc[t3["rung"] == claims["C8"]["rung"], "exact_rate"].mean()),
            ">=",
            claims["C8"]["min_exact_rate"],
        ),
        "C9": Headline(
            f"P_invert exact rate at σ = {c9['noisy_sigma_invert']:g}, β ≤ {c9['max_beta_invert']:g}",
            float((inv["exact_rate"] * inv["n_cases"]).sum() / inv["n_cases"].sum())
            if len(inv) and inv["n_cases"].sum() > 0
            else np.nan,
            "<=",
            c9["max_exact_rate_invert_noisy"],
        ),
    }


def read_run_tables(run_dir) -> dict[str, pd.DataFrame]:
    """The tables of one run that the scale table reads; ValueError naming an absent one."""
    tables = {}
    for name in HEADLINE_TABLES:
        path = Path(run_dir) / "tables" / name
        if not path.exists():
            raise ValueError(f"run {run_dir} lacks tables/{name}; run its reproduce-all first")
        tables[name.removesuffix(".csv")] = pd.read_csv(path)
    return tables


def scale_rows(d: int, tables: dict[str, pd.DataFrame], claims: dict) -> pd.DataFrame:
    """Rows (claim, d, verdict, headline, value, sense, threshold, margin) of one run."""
    verdicts = dict(zip(tables["claims"]["claim"], tables["claims"]["verdict"]))
    rows = []
    for claim, h in headlines(tables, claims).items():
        rows.append(
            {
                "claim": claim,
                "d": d,
                "verdict": verdicts.get(claim, "missing input"),
                "headline": h.text,
                "value": h.value,
                "sense": h.sense,
                "threshold": h.threshold,
                "margin": h.margin,
            }
        )
    return pd.DataFrame(rows, columns=COLUMNS)


def verdict_by_scale(runs: dict[int, dict[str, pd.DataFrame]], claims: dict) -> pd.DataFrame:
    """The long table claim × d of every run (runs: d -> its tables)."""
    parts = [scale_rows(d, runs[d], claims) for d in sorted(runs)]
    out = pd.concat(parts, ignore_index=True)
    return out.sort_values(["claim", "d"], kind="stable").reset_index(drop=True)


def scale_markdown(table: pd.DataFrame) -> str:
    """Claim × d grid: verdict and headline value per cell (exploratory, no verdict)."""
    ds = sorted(table["d"].unique())
    lines = [
        "Verdict by scale (exploratory: no verdict of its own; each cell is that run's verdict "
        "and its headline value, threshold in the last column).",
        "",
        "| claim | headline | " + " | ".join(f"d = {d}" for d in ds) + " | threshold |",
        "|---|---|" + "---|" * len(ds) + "---|",
    ]
    for claim, g in table.groupby("claim", sort=True):
        cells = []
        for d in ds:
            r = g[g["d"] == d]
            if r.empty:
                cells.append("not run")
                continue
            r = r.iloc[0]
            word = "✓" if r["verdict"] == "reproduced" else f"**{r['verdict']}**"
            cells.append(f"{word} {r['value']:.3g}")
        first = g.iloc[0]
        lines.append(
            f"| {claim} | {first['headline']} | "
            + " | ".join(cells)
            + f" | {first['sense']} {first['threshold']:g} |"
        )
    return "\n".join(lines) + "\n"


def figure_scale(table: pd.DataFrame):
    """Headline margin of each claim against d (log₂ axis); hollow markers: not reproduced."""
    import matplotlib as mpl
    import seaborn as sns
    from matplotlib.figure import Figure

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
        ax.set_title("Verdict by scale (exploratory): hollow = claim not reproduced at that d")
        fig.legend(loc="outside right center", frameon=False, title="claim")
    return fig
