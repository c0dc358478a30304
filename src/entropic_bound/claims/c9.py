"""C9, the data-only frontier: linear QK exact, softmax only partial. (docs/method.md §5)

The statement is the abstract's sentence; the test's thresholds come from config/claims.yaml.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from entropic_bound.analysis import frontier_rate
from entropic_bound.claims.verdict import Check, claim, fmt

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
    hi, lo, k = c["min_exact_rate_linear"], c["max_exact_rate_invert_noisy"], c["scale_factor"]
    f = tables["frontier"]
    checks = []

    l3 = frontier_rate(f, est, predictor="P_attn", value_map="unknown", **{"class": "L3"})
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
            checks.append(
                Check(
                    bool(test(g["exact"].mean())),
                    f"P_invert σ = {fmt(sigma)}: {int(g['exact'].sum())}/{len(g)} = "
                    f"{g['exact'].mean():.2f}",
                )
            )
    return checks


#: the registered claim (claims/registry.py lists them in order)
CLAIM = claim_c9
