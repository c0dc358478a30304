"""Registration v4's selectors of C9 (docs/method.md §5d): the data-only frontier per teacher,
X1's per-teacher noise tolerance and the identifiability cells."""

from __future__ import annotations

import numpy as np
import pandas as pd

from entropic_bound.claims import theory, theory_v3
from entropic_bound.claims.v4.base import Selected, _needs
from entropic_bound.claims.verdict import Check, fmt

# ---------------------------------------------------------------- C9: the data-only frontier


def _frontier(tables, run, s) -> Check | None:
    bad = _needs(tables, "frontier")
    if bad is not None:
        return bad
    if run is None:
        return Check(None, "the run's config is needed for the estimator's admission")
    fr = run["frontier"]
    return theory.admission(
        s["C9"]["estimator"], fr["r_star"], fr["kappa"], s["estimator_margin"], "frontier"
    )


def _per_teacher(rows: pd.DataFrame) -> pd.Series:
    """A teacher is exact when every one of its cells is: one known miss decides; else a NaN
    cell leaves it unknown."""
    if rows.empty:
        return pd.Series(dtype="object")
    return theory_v3.combine(rows["hit"], theory_v3.units_of(rows))


def _registered_teachers(run, value_map: str) -> list[str]:
    fr = run["frontier"]
    return [f"{value_map}/{r}/{sd}" for r in fr["r_star"] for sd in fr["seeds"]]


def linear_clean(tables, run, s, inputs) -> Selected | Check:
    """P_attn on L3, value unknown, σ = 0, every n ≥ d: exact on every teacher (a theorem:
    col(C) = col(A) whatever V is)."""
    bad = _frontier(tables, run, s)
    if bad is not None:
        return bad
    f = tables["frontier"]
    a = theory_v3.frontier_rows(f, s["C9"]["estimator"], predictor="P_attn", value_map="unknown")
    a = a[(a["class"] == "L3") & (a["sigma"] == 0) & (a["n"] >= a["d"])]
    per = _per_teacher(a).reindex(_registered_teachers(run, "unknown"))
    return Selected("L3 P_attn (value unknown), σ = 0, every n ≥ d", per, "teachers")


def linear_at_scale(tables, run, s, inputs) -> Selected | Check:
    """P_attn on L3, value unknown: exact on every teacher at every n ≥ scale·d and every
    0 < σ/std ≤ the bound (std: the clean output's, g·sqrt(1 + (d + 1)/n))."""
    bad = _frontier(tables, run, s)
    if bad is not None:
        return bad
    c = s["C9"]
    f = tables["frontier"]
    a = theory_v3.frontier_rows(f, c["estimator"], predictor="P_attn", value_map="unknown")
    a = a[a["class"] == "L3"]
    rel = a["sigma"] / (run["frontier"]["gain"] * np.sqrt(1 + (a["d"] + 1) / a["n"]))
    a = a[
        (a["n"] >= c["scale_factor"] * a["d"])
        & (a["sigma"] > 0)
        & (rel <= c["max_relative_sigma_at_scale"] + s["float_slack"])
    ]
    if a.empty:
        return Check(None, f"no L3 cell with n ≥ {fmt(c['scale_factor'])}·d and 0 < σ/std ≤ bound")
    per = _per_teacher(a).reindex(_registered_teachers(run, "unknown"))
    what = (
        f"L3 P_attn (value unknown) exact at every n ≥ {fmt(c['scale_factor'])}·d, "
        f"0 < σ/std ≤ {fmt(c['max_relative_sigma_at_scale'])}"
    )
    return Selected(what, per, "teachers")


def softmax_partial(tables, run, s, inputs) -> Selected | Check:
    """Per teacher (value unknown), over its matched cells (σ = 0, n > d, every β): 0 < L4's
    exact rate < L3's. An L4 cell without its L3 cell, or a NaN estimate, leaves the teacher
    unknown unless the other cells already decide it."""
    bad = _frontier(tables, run, s)
    if bad is not None:
        return bad
    f = tables["frontier"]
    rows = lambda cls: theory_v3.frontier_rows(  # noqa: E731
        f, s["C9"]["estimator"], predictor="P_attn", value_map="unknown"
    ).query("`class` == @cls and sigma == 0 and n > d")
    key = ["value_map", "n", "r_star", "seed"]
    l4, l3 = rows("L4"), rows("L3")
    m = l4.merge(l3[key + ["hit"]], on=key, how="left", suffixes=("", "_l3"))
    out = {}
    for unit, g in m.groupby(theory_v3.units_of(m).to_numpy()) if len(m) else []:
        h4, h3 = g["hit"].astype(float), g["hit_l3"].astype(float)
        if h4.isna().any() or h3.isna().any():
            out[unit] = np.nan
        else:
            r4, r3 = h4.mean(), h3.mean()
            out[unit] = bool(0 < r4 < r3)
    per = pd.Series(out, dtype="object").reindex(_registered_teachers(run, "unknown"))
    return Selected("per teacher, 0 < L4 exact rate < matched L3's (σ = 0, n > d)", per, "teachers")


def nonlinear_inversion(tables, run, s, inputs) -> Selected | Check:
    """Per teacher (value known; n < d, or n = d for the line beyond the abstract): the median
    over its β cells of σ_exact(linear twin) / σ_exact(P_invert) ≥ min_tolerance_ratio. A
    teacher that P_invert does not recover at σ = 0 is unknown; 0/0 and ∞/∞ (the grid does not
    separate them) are misses."""
    bad = _needs(tables, "X1_teachers")
    if bad is not None:
        return bad
    x = tables["X1_teachers"]
    x = x[x["n"] < x["d"]] if inputs["n"] == "below_d" else x[x["n"] == x["d"]]
    if x.empty:
        return Check(
            None, f"no X1_teachers cell with n {'<' if inputs['n'] == 'below_d' else '='} d"
        )
    key = ["value_map", "r_star", "seed", "n", "d", "beta", "n_seqs"]
    inv = x[x["predictor"] == "P_invert"].set_index(key)["sigma_exact_rel"]
    twin = x[x["predictor"] == "P_invert_linear"].set_index(key)["sigma_exact_rel"]
    both = pd.concat([inv.rename("inv"), twin.rename("twin")], axis=1)  # outer: none dropped
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = both["twin"] / both["inv"]
    unknown = both["inv"].isna() | both["twin"].isna()
    ratio = ratio.where(~unknown)
    ratio = ratio.fillna(0.0).where(~unknown)  # 0/0, ∞/∞: the grid does not separate: a miss
    r = ratio.rename("ratio").reset_index()
    units = r[["value_map", "r_star", "seed"]].astype(str).agg("/".join, axis=1)
    need = s["C9"]["min_tolerance_ratio"]
    med = (
        r["ratio"].groupby(units.to_numpy()).agg(lambda v: np.nan if v.isna().any() else v.median())
    )
    out = med.map(lambda v: np.nan if pd.isna(v) else bool(v >= need)).astype("object")
    where = "n < d" if inputs["n"] == "below_d" else "n = d"
    what = f"{where}: σ_exact(linear twin)/σ_exact(P_invert) ≥ {fmt(need)} (median over β)"
    return Selected(what, out, "teachers")


def identifiability(tables, run, s, inputs) -> Selected | Check:
    """P_invert assuming V = I on value-unknown data, σ = 0, n < d: exact kernels (each cell's
    clean rate × its cases)."""
    bad = _needs(tables, "X1_boundaries")
    if bad is not None:
        return bad
    x1 = tables["X1_boundaries"]
    ident = x1[(x1["predictor"] == "P_invert_V=I") & (x1["n"] < x1["d"])]
    if "frontier_budget" in ident:
        ident = ident[ident["frontier_budget"].astype(bool)]
    hits = np.rint(ident["rate_clean"] * ident["n_cases"])
    total = int(ident["n_cases"].sum())
    k = int(hits.sum()) if hits.notna().all() else None
    if k is None:
        return Check(None, "P_invert(V = I): a cell's clean rate is NaN")
    out = pd.Series([True] * k + [False] * (total - k), dtype="object")
    cases = ident["n_cases"].max() if len(ident) else 0
    return Selected(
        "P_invert assuming V = I, value unknown, n < d, σ = 0: exact",
        out,
        "kernels",
        independent=int(cases),
    )
