"""C9, the data-only frontier: linear QK exact, softmax only partial. (docs/method.md §5)

The statement is the abstract's sentence; the test's thresholds come from config/claims.yaml.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from entropic_bound.analysis import (
    frontier_rate,
)
from entropic_bound.claims import theory
from entropic_bound.claims.verdict import INSUFFICIENT, Check, claim, fmt

#: the abstract's sentence this claim tests
STATEMENT = (
    "r* is exactly recoverable for linear QK attention, even without the value map at scale, "
    "while softmax attention admits only partial pre-training recovery"
)


def _t_c9(claims: dict) -> str:
    c = claims["C9"]
    k = c["scale_factor"]
    return (
        f"P_attn on L3, V unknown: ≥ {c['min_exact_rate_linear']:.0%} per n ≥ d at σ = 0 and "
        f"per (n ≥ {fmt(k)}d, σ ≤ {fmt(c['max_sigma_at_scale'])}); L4 rate < L3 rate and, per "
        f"n ≥ {fmt(k)}d, rate at max β < at min β; P_invert (V known, n ≤ d, σ = 0, "
        f"β ≤ {fmt(c['max_beta_invert'])}) ≥ {c['min_exact_rate_invert']:.0%} and "
        f"< {c['max_exact_rate_invert_noisy']:.0%} at σ = {fmt(c['noisy_sigma_invert'])}"
    )


@claim("C9", STATEMENT, needs=("frontier",), threshold=_t_c9)
def claim_c9(tables: Mapping, claims: dict) -> list[Check]:
    """The frontier: P_attn exact on L3 (value unknown) for n ≥ d at σ = 0 and for every
    σ ≤ max_sigma once n ≥ k·d; lower on L4, and lower at the largest β than at the smallest
    for every n ≥ k·d; P_invert exact at σ = 0, β ≤ max_beta and not at the noisy σ."""
    c, est, slack = claims["C9"], claims["estimator"], claims["float_slack"]
    f = tables["frontier"]
    l3 = frontier_rate(f, est, predictor="P_attn", value_map="unknown", **{"class": "L3"})
    return [
        *_linear(l3, c, slack),
        *_softmax(f, l3, c, est),
        *_inversion(f, c, est, slack),
    ]


def _linear(l3, c: dict, slack: float) -> list[Check]:
    """P_attn on L3 (value unknown): exact at σ = 0 for n ≥ d, and at scale for σ ≤ max."""
    hi, k = c["min_exact_rate_linear"], c["scale_factor"]
    checks = []
    clean = l3[np.isclose(l3["sigma"], 0.0) & (l3["n"] >= l3["d"])]
    if clean.empty:
        checks.append(Check(None, "L3: no σ = 0, n ≥ d cells"))
    else:
        per_n = clean.groupby("n")["exact"].mean()
        checks.append(
            Check(
                bool((per_n >= hi).all()),
                "L3 σ = 0: rate per n " + ", ".join(f"{int(n)}: {v:.2f}" for n, v in per_n.items()),
            )
        )
    scale = l3[(l3["n"] >= k * l3["d"]) & (l3["sigma"] <= c["max_sigma_at_scale"] + slack)]
    if scale.empty:
        checks.append(Check(None, f"L3: no n ≥ {fmt(k)}d cells"))
    else:
        cell = scale.groupby(["n", "sigma"])["exact"].mean()
        worst = cell.idxmin()
        checks.append(
            Check(
                bool((cell >= hi).all()),
                f"L3 n ≥ {fmt(k)}d: min rate {cell.min():.2f} over {len(cell)} (n, σ) cells "
                f"(at n = {int(worst[0])}, σ = {fmt(worst[1])})",
            )
        )
    return checks


def _softmax(f, l3, c: dict, est: str) -> list[Check]:
    """P_attn on L4 below L3, and lower at the largest β than at the smallest, n ≥ k·d."""
    k = c["scale_factor"]
    checks = []
    l4 = frontier_rate(f, est, predictor="P_attn", value_map="unknown", **{"class": "L4"})
    if l4.empty or l3.empty:
        checks.append(Check(None, "L3 or L4 P_attn absent"))
    else:
        common = l4[l4["n"].isin(l3["n"]) & l4["sigma"].isin(l3["sigma"])]
        r3 = l3[l3["n"].isin(common["n"]) & l3["sigma"].isin(common["sigma"])]["exact"].mean()
        r4 = common["exact"].mean()
        checks.append(Check(bool(r4 < r3), f"P_attn rate L4 {r4:.2f} vs L3 {r3:.2f}"))
        big = l4[l4["n"] >= k * l4["d"]]
        betas = sorted(l4["beta"].dropna().unique())
        if big.empty or len(betas) < 2:
            checks.append(Check(None, f"L4: need n ≥ {fmt(k)}d and ≥ 2 values of β"))
        else:
            parts, ok = [], True
            for n, g in big.groupby("n"):
                r_lo = g[g["beta"] == betas[0]]["exact"].mean()
                r_hi = g[g["beta"] == betas[-1]]["exact"].mean()
                ok &= bool(r_hi < r_lo)
                parts.append(
                    f"n = {int(n)}: {r_hi:.2f} at β = {fmt(betas[-1])} vs {r_lo:.2f} at "
                    f"β = {fmt(betas[0])}"
                )
            checks.append(Check(ok, "L4 " + "; ".join(parts)))
    return checks


def _inversion(f, c: dict, est: str, slack: float) -> list[Check]:
    """P_invert (value known, n ≤ d, β ≤ max): exact at σ = 0, not at the noisy σ."""
    lo = c["max_exact_rate_invert_noisy"]
    checks = []
    inv = frontier_rate(f, est, predictor="P_invert", value_map="known")
    inv = inv[(inv["n"] <= inv["d"]) & (inv["beta"] <= c["max_beta_invert"] + slack)]
    for sigma, test in (
        (0.0, lambda r: r >= c["min_exact_rate_invert"]),
        (c["noisy_sigma_invert"], lambda r: r < lo),
    ):
        g = inv[np.isclose(inv["sigma"], sigma)]
        if g.empty:
            checks.append(Check(None, f"P_invert: no σ = {fmt(sigma)} cells"))
        else:
            sense, limit = (">=", c["min_exact_rate_invert"]) if sigma == 0 else ("<", lo)
            head = (f"P_invert exact rate at σ = {fmt(sigma)}", g["exact"].mean(), sense, limit)
            checks.append(
                Check(
                    bool(test(g["exact"].mean())),
                    f"P_invert σ = {fmt(sigma)}: {int(g['exact'].sum())}/{len(g)} = "
                    f"{g['exact'].mean():.2f}",
                    headline=(*head, len(g)) if sigma > 0 else None,
                )
            )
    return checks


#: the registered claim (claims/registry.py lists them in order)
CLAIM = claim_c9


# ---------------------------------------------------------------- registration v2


def _t_c9_v2(v2: dict) -> str:
    c = v2["C9"]
    return (
        f"P_invert exact at σ = 0 on ≥ {c['min_exact_rate_invert']:.0%} (n < d, β ≤ "
        f"{fmt(c['max_beta_invert'])}); σ50/std of P_invert below its linear twin's on ≥ "
        f"{c['min_share_nonlinear']:.0%} of (n < d, β, B) cells; P_invert assuming V = I exact on "
        f"≤ {c['max_exact_rate_identifiability']:.0%} (value unknown); P_attn on L3 (value "
        f"unknown) ≥ {c['min_exact_rate_linear']:.0%} at σ = 0 for every n > d and at σ/std ≤ "
        f"{fmt(c['max_relative_sigma_at_scale'])} for n ≥ {c['scale_factor']}·d; n = d apart"
    )


@claim("C9", STATEMENT, ("frontier", "X1_boundaries"), _t_c9_v2, registration="v2")
def claim_c9_v2(tables: Mapping, v2: dict, run: dict | None) -> list[Check]:
    """The two named mechanisms of "partial" and linear QK's exactness (docs/method.md §5b)."""
    c = v2["C9"]
    if run is None:
        return [Check(None, "the run's config is needed for the estimator's admission")]
    fr = run["frontier"]
    bad = theory.admission(
        c["estimator"], fr["r_star"], fr["kappa"], v2["estimator_margin"], "frontier"
    )
    if bad is not None:
        return [bad]
    f, x1 = tables["frontier"], tables["X1_boundaries"]
    f = f[f["estimator"] == c["estimator"]].assign(
        hit=lambda d: np.floor(d["r_hat"] + 0.5) == d["r_star"]
    )
    inv = f[(f["predictor"] == "P_invert") & (f["sigma"] == 0) & (f["n"] < f["d"])]
    inv = inv[inv["beta"] <= c["max_beta_invert"] + v2["float_slack"]]
    checks = [
        theory.counted(
            inv["hit"],
            c["min_exact_rate_invert"],
            v2,
            "P_invert σ = 0, n < d",
            "P_invert exact rate",
        )
    ]
    checks.append(_nonlinear(x1, c, v2))
    ident = x1[(x1["predictor"] == "P_invert_V=I") & (x1["n"] < x1["d"])]
    exact = float((ident["rate_clean"] * ident["n_cases"]).sum())
    total = int(ident["n_cases"].sum())
    share = exact / total if total else float("nan")
    text = f"P_invert assuming V = I on value-unknown data: exact {exact:.0f}/{total}"
    head = ("P_invert(V = I) exact rate", share, "<=", c["max_exact_rate_identifiability"], total)
    if total < v2["min_cases"]:
        checks.append(Check(None, f"{text} (insufficient data)", INSUFFICIENT, head))
    else:
        checks.append(
            Check(
                bool(share <= c["max_exact_rate_identifiability"] + v2["float_slack"]),
                f"{text} = {share:.2f}",
                headline=head,
            )
        )
    return checks + _linear_qk(f, c, v2, run)


def _nonlinear(x1: pd.DataFrame, c: dict, v2: dict) -> Check:
    keys = ["n", "d", "beta", "n_seqs"]
    a = x1[(x1["predictor"] == "P_invert") & (x1["n"] < x1["d"])].set_index(keys)["sigma50_rel"]
    b = x1[x1["predictor"] == "P_invert_linear"].set_index(keys)["sigma50_rel"]
    both = pd.concat([a.rename("invert"), b.rename("twin")], axis=1, join="inner")
    return theory.counted(
        both["invert"] < both["twin"],
        c["min_share_nonlinear"],
        v2,
        "σ50/std of P_invert < its linear twin's (n < d)",
        "share of cells where inversion is less noise tolerant",
    )


def _linear_qk(f: pd.DataFrame, c: dict, v2: dict, run: dict) -> list[Check]:
    """P_attn on L3, value unknown: σ = 0 for every n > d, and at scale every σ whose ratio to
    the clean output's std, g·sqrt(1 + (d + 1)/n) (docs/method.md §1), is ≤ the bound; the
    square cells n = d are reported apart, without a verdict."""
    a = f[(f["predictor"] == "P_attn") & (f["class"] == "L3") & (f["value_map"] == "unknown")]
    g = run["frontier"]["gain"]
    rel = a["sigma"] / (g * np.sqrt(1 + (a["d"] + 1) / a["n"]))
    checks = []
    square = a[(a["n"] == a["d"]) & (a["sigma"] == 0)]
    note = f"n = d apart: {int(square['hit'].sum())}/{len(square)} exact at σ = 0"
    clean = a[(a["n"] > a["d"]) & (a["sigma"] == 0)]
    for n, cell in clean.groupby("n"):
        checks.append(
            theory.counted(
                cell["hit"],
                c["min_exact_rate_linear"],
                v2,
                f"L3 P_attn n = {n}, σ = 0",
                "L3 P_attn exact rate",
            )
        )
    scale = a[
        (a["n"] >= c["scale_factor"] * a["d"])
        & (a["sigma"] > 0)
        & (rel <= c["max_relative_sigma_at_scale"] + v2["float_slack"])
    ]
    for (n, sigma), cell in scale.groupby(["n", "sigma"]):
        checks.append(
            theory.counted(
                cell["hit"],
                c["min_exact_rate_linear"],
                v2,
                f"L3 P_attn n = {n}, σ = {fmt(sigma)}",
                "L3 P_attn exact rate",
            )
        )
    if not checks:
        checks.append(Check(None, "no L3 P_attn cell with n > d", INSUFFICIENT))
    checks[-1].measured += f"; {note}"
    return checks


CLAIM_V2 = claim_c9_v2


# ---------------------------------------------------------------- registration v3


def _t_c9_v3(v3: dict) -> str:
    c = v3["C9"]
    return (
        "P_attn, σ = 0, n > d, value unknown: L4's exact rate below L3's; at every n ≥ "
        f"{c['scale_factor']}·d L4's exact rate lower at the largest β than at the smallest; "
        f"σ50/std of P_invert below its linear twin's on ≥ {c['min_share_nonlinear']:.0%} of "
        f"cells with n ≤ d (n = d shown apart); P_attn on L3 (value unknown) ≥ "
        f"{c['min_exact_rate_linear']:.0%} of teachers exact at every 0 < σ/std ≤ "
        f"{fmt(c['max_relative_sigma_at_scale'])}, n ≥ {c['scale_factor']}·d; σ = 0 exactness "
        "and identifiability are validations"
    )


@claim("C9", STATEMENT, ("frontier", "X1_boundaries"), _t_c9_v3, registration="v3")
def claim_c9_v3(tables: Mapping, v3: dict, run: dict | None) -> list[Check]:
    """ "Partial" tested where it can fail, linear QK at scale, and the σ = 0 theorems as
    validations (docs/method.md §5c)."""
    from entropic_bound.claims import theory_v3

    c = v3["C9"]
    if run is None:
        return [Check(None, "the run's config is needed for the estimator's admission")]
    fr = run["frontier"]
    bad = theory.admission(
        c["estimator"], fr["r_star"], fr["kappa"], v3["estimator_margin"], "frontier"
    )
    if bad is not None:
        return [bad]
    f, x1 = tables["frontier"], tables["X1_boundaries"]
    rows = lambda **w: theory_v3.frontier_rows(f, c["estimator"], **w)  # noqa: E731
    d_of = lambda col: f.loc[col.index, "d"]  # noqa: E731
    clean = dict(predictor="P_attn", value_map="unknown", sigma=lambda s: s == 0)
    l3 = rows(**{"class": "L3"}, **clean, n=lambda n: n > d_of(n))
    l4 = rows(**{"class": "L4"}, **clean, n=lambda n: n > d_of(n))
    from entropic_bound.claims import frontier_v3 as fv3

    checks = [fv3.partial(l3, l4, v3), fv3.falls_with_beta(l4, c, v3), fv3.nonlinear(x1, c, v3)]
    checks.append(fv3.linear_at_scale(f, c, v3, run))
    checks += fv3.validations(f, x1, l3, c, v3)
    return checks


CLAIM_V3 = claim_c9_v3
