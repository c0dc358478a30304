"""Registration v3's checks of C9 on the frontier grid and X1's boundaries (docs/method.md
§5c): "partial" where it can fail (softmax below its matched linear twin, falling with β),
nonlinear inversion over every n ≤ d, linear QK at scale, and the σ = 0 theorems as validations.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from entropic_bound.claims import theory_v3
from entropic_bound.claims.verdict import (
    INSUFFICIENT,
    Check,
    bound,
    fmt,
    undecided_note,
    unknown_note,
)


def partial(l3: pd.DataFrame, l4: pd.DataFrame, v3: dict) -> Check:
    """L4's exact rate (cells, all β) below the matched L3 cells'. Outer joined: a cell whose
    partner is absent, or a NaN estimate, is unknown on that side, and the check is decided by
    the bounding rule (against the claim: an L4 hit, an L3 miss), naming the cells."""
    name = "C9 softmax below linear (matched)"
    key = ["value_map", "n", "r_star", "seed"]
    m = l4.merge(l3[key + ["hit"]], on=key, how="outer", suffixes=("", "_l3"), indicator=True)
    units = theory_v3.units_of(m).nunique() if len(m) else 0
    slack = v3["float_slack"]

    def rates(fav: bool) -> tuple[float, float]:  # (L4, L3); an L4 hit is against the claim
        return float(_filled(m["hit"], not fav).mean()), float(_filled(m["hit_l3"], fav).mean())

    a, b = rates(False)
    text = f"L4 exact {fmt(a)} vs matched L3 {fmt(b)} ({len(m)} cells, {units} teachers)"
    text += unknown_note(_unknown(m, ["hit", "hit_l3"], key))
    head = ("L3 − L4 exact rate (matched)", b - a, ">=", 0.0, units)
    if units < v3["min_tasks"]:
        return Check(None, f"{text} (insufficient data)", INSUFFICIENT, head, name)

    def below(fav: bool) -> bool:
        l4_rate, l3_rate = rates(fav)
        return l4_rate < l3_rate - slack

    passed = bound(below)
    return Check(passed, text + undecided_note(passed), headline=head, name=name)


def _filled(hit: pd.Series, value: bool) -> pd.Series:
    """Hits with the unknown ones (NaN, or an absent partner's) set to ``value``."""
    return pd.Series(hit, dtype="object").astype("boolean").fillna(value).astype(bool)


def _unknown(m: pd.DataFrame, cols: list[str], key: list[str]) -> list[str]:
    """The labels of the rows with an unknown value in any of ``cols``."""
    gone = m[cols].isna().any(axis=1).to_numpy()
    label = m[key].astype(str).agg("/".join, axis=1)
    if "beta" in m.columns:
        label = label + " β=" + m["beta"].astype(str)
    return list(label[gone])


def falls_with_beta(l4: pd.DataFrame, c: dict, v3: dict) -> Check:
    """At every n ≥ scale·d: L4's exact rate at the largest β below that at the smallest; a NaN
    estimate is unknown (bounding rule: against the claim, a miss at the smallest β and a hit
    at the largest)."""
    name = "C9 softmax falls with β"
    big = l4[l4["n"] >= c["scale_factor"] * l4["d"]]
    if big.empty:
        return Check(
            None, f"no L4 cell with n ≥ {fmt(c['scale_factor'])}·d", INSUFFICIENT, name=name
        )
    units = theory_v3.units_of(big).nunique()
    slack = v3["float_slack"]
    groups = [
        (n, g[g["beta"] == g["beta"].min()], g[g["beta"] == g["beta"].max()])
        for n, g in big.groupby("n")
    ]

    def rates(lo, hi, fav: bool) -> tuple[float, float]:
        return float(_filled(lo["hit"], fav).mean()), float(_filled(hi["hit"], not fav).mean())

    def falls(fav: bool) -> bool:
        return all(r[1] < r[0] - slack for r in (rates(lo, hi, fav) for _, lo, hi in groups))

    parts = []
    for n, lo, hi in groups:
        r_lo, r_hi = rates(lo, hi, False)
        parts.append(
            f"n = {n}: β {fmt(hi['beta'].max())} {r_hi:.2f} vs β {fmt(lo['beta'].min())} {r_lo:.2f}"
        )
    text = "L4 exact rate, largest vs smallest β: " + "; ".join(parts) + f" ({units} teachers)"
    cells = pd.concat([g for _, lo, hi in groups for g in (lo, hi)])
    text += unknown_note(_unknown(cells, ["hit"], ["value_map", "n", "r_star", "seed"]))
    if units < v3["min_tasks"]:
        return Check(None, f"{text} (insufficient data)", INSUFFICIENT, name=name)
    passed = bound(falls)
    return Check(passed, text + undecided_note(passed), name=name)


def nonlinear(x1: pd.DataFrame, c: dict, v3: dict) -> Check:
    """σ50/std of P_invert below its linear twin's on ≥ the share of X1's cells with n ≤ d; the
    n = d cells are shown on their own line (and counted). Outer joined: a cell whose twin is
    absent, or a NaN, is unknown (bounded by the rate, named)."""
    keys = ["n", "d", "beta", "n_seqs"]
    a = x1[(x1["predictor"] == "P_invert") & (x1["n"] <= x1["d"])].set_index(keys)["sigma50_rel"]
    b = x1[(x1["predictor"] == "P_invert_linear") & (x1["n"] <= x1["d"])]
    b = b.set_index(keys)["sigma50_rel"]
    both = pd.concat([a.rename("invert"), b.rename("twin")], axis=1, join="outer")
    win = pd.Series(
        np.where(both.isna().any(axis=1), np.nan, both["invert"] < both["twin"]),
        index=[" ".join(f"{k}={v}" for k, v in zip(keys, i)) for i in both.index],
        dtype="object",
    )
    check = theory_v3.rate_check(
        "C9 nonlinear inversion (n ≤ d)",
        win,
        c["min_share_nonlinear"],
        v3,
        "σ50/std of P_invert < its linear twin's, cells with n ≤ d",
        "share of cells where inversion is less noise tolerant",
        unit="cells",
    )
    sq = both.reset_index()
    sq = sq[sq["n"] == sq["d"]]
    check.measured += f"; n = d alone: {int((sq['invert'] < sq['twin']).sum())}/{len(sq)}"
    return check


def linear_at_scale(f: pd.DataFrame, c: dict, v3: dict, run: dict) -> Check:
    """P_attn on L3, value unknown, n ≥ scale·d, 0 < σ/std ≤ the bound: a teacher counts only if
    every such cell of it is exact."""
    a = theory_v3.frontier_rows(f, c["estimator"], predictor="P_attn", value_map="unknown")
    a = a[a["class"] == "L3"]
    g = run["frontier"]["gain"]
    rel = a["sigma"] / (g * np.sqrt(1 + (a["d"] + 1) / a["n"]))
    cells = a[
        (a["n"] >= c["scale_factor"] * a["d"])
        & (a["sigma"] > 0)
        & (rel <= c["max_relative_sigma_at_scale"] + v3["float_slack"])
    ]
    per = theory_v3.combine(cells["hit"], theory_v3.units_of(cells)) if len(cells) else pd.Series()
    return theory_v3.rate_check(
        "C9 linear QK at scale",
        per,
        c["min_exact_rate_linear"],
        v3,
        f"L3 P_attn (value unknown) exact at every n ≥ {fmt(c['scale_factor'])}·d, "
        f"0 < σ/std ≤ {fmt(c['max_relative_sigma_at_scale'])}",
        "L3 P_attn exact rate at scale",
    )


def validations(f, x1, l3, c: dict, v3: dict) -> list[Check]:
    """The σ = 0 theorems and the Haar certainty: computed and reported, no verdict weight."""
    inv = theory_v3.frontier_rows(f, c["estimator"], predictor="P_invert", sigma=lambda s: s == 0)
    inv = inv[(inv["n"] <= inv["d"]) & (inv["beta"] <= c["max_beta_invert"] + v3["float_slack"])]
    out = [
        theory_v3.rate_check(
            "C9 P_invert exact at σ = 0 (n ≤ d)",
            theory_v3.combine(inv["hit"], theory_v3.units_of(inv)) if len(inv) else pd.Series(),
            c["min_exact_rate_invert"],
            v3,
            "P_invert σ = 0, n ≤ d, β ≤ max",
            "P_invert exact rate",
        ),
        theory_v3.rate_check(
            "C9 L3 P_attn exact at σ = 0 (n > d)",
            theory_v3.combine(l3["hit"], theory_v3.units_of(l3)) if len(l3) else pd.Series(),
            c["min_exact_rate_linear"],
            v3,
            "L3 P_attn σ = 0, n > d",
            "L3 P_attn exact rate",
        ),
    ]
    ident = x1[(x1["predictor"] == "P_invert_V=I") & (x1["n"] <= x1["d"])]
    exact, total = (
        float((ident["rate_clean"] * ident["n_cases"]).sum()),
        int(ident["n_cases"].sum()),
    )
    share = exact / total if total else float("nan")
    ok = share <= c["max_exact_rate_identifiability"] + v3["float_slack"] if total else None
    out.append(
        Check(
            ok,
            f"P_invert assuming V = I on value-unknown data: exact {exact:.0f}/{total} kernels",
            name="C9 identifiability (V = I)",
        )
    )
    return [theory_v3.validation(ch) for ch in out]
