"""Claims C6–C9 (SCIENCE.md §5): the input-conditioned mixing operator, the restored bound under
the attention-native definition, the estimator's robustness, and the predictability frontier.

Each is registered in :data:`.claims_base.CLAIMS` by :func:`.claims_base.claim`.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from . import claims_static  # noqa: F401  (C1–C5 register first: CLAIMS stays in order C1..C9)
from .analysis import (
    empirical_knees,
    estimate_finite,
    exact_summary,
    frontier_rate,
    full_rank_students,
    intrinsic_ranks,
    pretty_estimator,
    risk_curves,
    sort_rungs,
    spearman,
    spectra_matrix,
)
from .claims_base import (
    Check,
    _absent_rungs,
    _achievability,
    _deficiency,
    _g,
    _nan_note,
    _recovery,
    _sparse_note,
    claim,
)

# ---------------------------------------------------------------- C6–C9


def _t_c6(claims: dict) -> str:
    c = claims["C6"]
    return (
        f"P_static = r_emp = r* on ≥ {c['min_match_rate_static_rungs']:.0%} of "
        f"{', '.join(c['static_rungs'])}; P_static = r* on ≤ "
        f"{c['max_match_rate_attention_rungs']:.0%} of {', '.join(c['attention_rungs'])}; "
        f"Spearman(λ, share) ≤ {_g(c['max_spearman_share'])}, "
        f"Spearman(λ, static R) ≥ {_g(c['min_spearman_risk'])}"
    )


@claim("C6", needs=("data_only_predictions", "train_metrics"), threshold=_t_c6)
def claim_c6(tables: Mapping, claims: dict) -> list[Check]:
    """The ladder: static prediction holds on the static rungs, fails on the attention rungs,
    and degrades monotonically in λ (Spearman of λ with the mean static-fit share and the
    mean static-student R; a NaN in a rung makes its mean NaN, and the trend fails)."""
    c = claims["C6"]
    t = intrinsic_ranks(
        tables["data_only_predictions"],
        claims["estimator"],
        tables["train_metrics"],
        claims["epsilon"],
    )
    checks = []

    static_rungs = list(c["static_rungs"])
    s = t[t["rung"].isin(static_rungs)]
    if s.empty:
        checks.append(Check(None, f"no {', '.join(static_rungs)} tasks"))
    else:
        hit = (s["P_static"] == s["r_star"]) & (s["r_emp"] == s["r_star"])
        per = ", ".join(f"{r} {hit[s['rung'] == r].mean():.2f}" for r in sort_rungs(s["rung"]))
        checks.append(
            Check(
                bool(hit.mean() >= c["min_match_rate_static_rungs"]),
                f"P_static = r_emp = r* on {int(hit.sum())}/{len(s)} = {hit.mean():.2f} "
                f"of static-rung tasks ({per}){_absent_rungs(s['rung'], static_rungs)}",
            )
        )
    att_rungs = list(c["attention_rungs"])
    a = t[t["rung"].isin(att_rungs)]
    if a.empty:
        checks.append(Check(None, f"no {', '.join(att_rungs)} tasks"))
    else:
        hit = a["P_static"] == a["r_star"]
        checks.append(
            Check(
                bool(hit.mean() <= c["max_match_rate_attention_rungs"]),
                f"P_static = r* on {int(hit.sum())}/{len(a)} = {hit.mean():.2f} of "
                f"attention tasks{_absent_rungs(a['rung'], att_rungs)}",
            )
        )

    lad = t.dropna(subset=["lambda"])
    grp = lad.groupby("lambda")[["static_fit_share", "static_student_R"]]
    per_rung = grp.mean().mask(grp.count().lt(grp.size(), axis=0)).reset_index()
    where = (
        f"{len(per_rung)} ladder rungs: " + ", ".join(sort_rungs(lad["rung"]))
        if len(per_rung)
        else "no ladder rungs"
    )
    need = c["min_ladder_rungs"]
    if len(per_rung) < need:  # Spearman of two points is ±1 whatever the data: no evidence
        checks.append(Check(None, f"{where}; need ≥ {need} of L2, Lλ, L4 for a monotone trend"))
    else:
        rho_s = spearman(per_rung["lambda"], per_rung["static_fit_share"])
        rho_r = spearman(per_rung["lambda"], per_rung["static_student_R"])
        checks.append(
            Check(
                bool(rho_s <= c["max_spearman_share"]),
                f"{where}; Spearman(λ, share) = {_g(rho_s)} (shares "
                + ", ".join(_g(x) for x in per_rung["static_fit_share"])
                + ")",
            )
        )
        checks.append(
            Check(
                bool(rho_r >= c["min_spearman_risk"]),
                f"Spearman(λ, static R) = {_g(rho_r)} (R "
                + ", ".join(_g(x) for x in per_rung["static_student_R"])
                + ")",
            )
        )
    return checks


def _t_c7(claims: dict) -> str:
    c = claims["C7"]
    floor = c["min_deficiency_factor"] * claims["epsilon"]
    return (
        f"on each of {', '.join(c['rungs'])}: R(r) ≥ {_g(floor)} for r < r*; "
        f"R(r*) ≤ {_g(c['max_risk'])}; {pretty_estimator(claims['estimator'])}(learned) = r* "
        f"on ≥ {claims['C3']['min_exact_rate']:.0%}; r_emp = r* on ≥ {c['min_exact_rate']:.0%}"
    )


@claim("C7", needs=("train_metrics",), threshold=_t_c7)
def claim_c7(tables: Mapping, claims: dict) -> list[Check]:
    """L3 and L4 with the QK kernel: deficiency (R ≥ factor·ε below r*), achievability,
    recovery (as C2, C3) and r_emp = r*; each rung separately."""
    c, eps = claims["C7"], claims["epsilon"]
    floor = c["min_deficiency_factor"] * eps
    metrics = tables["train_metrics"]
    curves = risk_curves(metrics)
    checks = []
    for rung in c["rungs"]:
        if not (curves["rung"] == rung).any():
            checks.append(Check(None, f"{rung}: absent"))
            continue
        d = _deficiency(curves, rung)
        if d.empty:
            checks.append(Check(None, f"{rung}: no student below r*"))
        else:
            ok = int((d["R"] >= floor).sum())
            checks.append(
                Check(
                    bool(ok == len(d)),
                    f"{rung}: R ≥ {_g(floor)} on {ok}/{len(d)} (task, r < r*) cells "
                    f"(min R {_g(d['R'].min())}, R/R* min {_g(d['ratio'].min())}, "
                    f"median {_g(d['ratio'].median())})"
                    + _nan_note(d["R"], "R")
                    + _sparse_note(d, curves, rung),
                )
            )
        checks.append(_achievability(curves, rung, c["max_risk"]))
        checks.append(_recovery(metrics, rung, claims))
        knees = empirical_knees(curves[curves["rung"] == rung], eps)
        hit = knees["r_emp"] == knees["r_star"]
        checks.append(
            Check(
                bool(hit.mean() >= c["min_exact_rate"]),
                f"{rung}: r_emp = r* on {int(hit.sum())}/{len(knees)} = {hit.mean():.2f}",
            )
        )
    return checks


def _t_c8(claims: dict) -> str:
    c = claims["C8"]
    return (
        f"{c['rung']} learned full-rank kernels: no estimator with smaller mean |err| than "
        f"{pretty_estimator(claims['estimator'])}, which is exact on ≥ {c['min_exact_rate']:.0%}"
    )


@claim("C8", needs=("train_metrics",), threshold=_t_c8)
def claim_c8(tables: Mapping, claims: dict) -> list[Check]:
    """Learned full-rank kernels of the softmax rung: no estimator of C8's list (claims.yaml,
    not the run config) has a smaller mean |error| than the claims estimator, which is exact
    on ≥ min_exact_rate."""
    c, est = claims["C8"], claims["estimator"]
    names = list(dict.fromkeys([*c["estimators"], est]))
    full = full_rank_students(tables["train_metrics"])
    full = full[full["rung"] == c["rung"]]
    if full.empty:
        return [Check(None, f"no full-rank {c['rung']} student")]
    S = spectra_matrix(full["spectrum"])
    summ = {
        e: exact_summary(estimate_finite(S, e, tol=claims["numerical_tol"]), full["r_star"])
        for e in names
    }
    ours = summ[est]
    others = {e: s for e, s in summ.items() if e != est}
    tie = c["tie_tolerance"]
    beaten = [
        e
        for e, s in others.items()
        if not np.isfinite(ours["mean_abs_error"])
        or s["mean_abs_error"] < ours["mean_abs_error"] - tie
    ]
    text = f"{pretty_estimator(est)} mean |err| {_g(ours['mean_abs_error'])}"
    if others:
        best = min(others, key=lambda e: others[e]["mean_abs_error"])
        text += f"; best other {pretty_estimator(best)} {_g(others[best]['mean_abs_error'])}"
    if beaten:
        text += f"; smaller: {', '.join(pretty_estimator(e) for e in beaten)}"
    return [
        Check(not beaten, text),
        Check(
            bool(ours["exact_rate"] >= c["min_exact_rate"]),
            f"{pretty_estimator(est)} exact {ours['exact']}/{ours['n']} = {ours['exact_rate']:.2f}",
        ),
    ]


def _t_c9(claims: dict) -> str:
    c = claims["C9"]
    k = c["scale_factor"]
    return (
        f"P_attn on L3, V unknown: ≥ {c['min_exact_rate_linear']:.0%} per n ≥ d at σ = 0 and "
        f"per (n ≥ {_g(k)}d, σ ≤ {_g(c['max_sigma_at_scale'])}); L4 rate < L3 rate and, per "
        f"n ≥ {_g(k)}d, rate at max β < at min β; P_invert (V known, n ≤ d, σ = 0, "
        f"β ≤ {_g(c['max_beta_invert'])}) ≥ {c['min_exact_rate_invert']:.0%} and "
        f"< {c['max_exact_rate_invert_noisy']:.0%} at σ = {_g(c['noisy_sigma_invert'])}"
    )


@claim("C9", needs=("frontier",), threshold=_t_c9)
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
        checks.append(Check(None, f"L3: no n ≥ {_g(k)}d cells"))
    else:
        cell = scale.groupby(["n", "sigma"])["exact"].mean()
        worst = cell.idxmin()
        checks.append(
            Check(
                bool((cell >= hi).all()),
                f"L3 n ≥ {_g(k)}d: min rate {cell.min():.2f} over {len(cell)} (n, σ) cells "
                f"(at n = {int(worst[0])}, σ = {_g(worst[1])})",
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
            checks.append(Check(None, f"L4: need n ≥ {_g(k)}d and ≥ 2 values of β"))
        else:
            parts, ok = [], True
            for n, g in big.groupby("n"):
                r_lo = g[g["beta"] == betas[0]]["exact"].mean()
                r_hi = g[g["beta"] == betas[-1]]["exact"].mean()
                ok &= bool(r_hi < r_lo)
                parts.append(
                    f"n = {int(n)}: {r_hi:.2f} at β = {_g(betas[-1])} vs {r_lo:.2f} at "
                    f"β = {_g(betas[0])}"
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
            checks.append(Check(None, f"P_invert: no σ = {_g(sigma)} cells"))
        else:
            checks.append(
                Check(
                    bool(test(g["exact"].mean())),
                    f"P_invert σ = {_g(sigma)}: {int(g['exact'].sum())}/{len(g)} = "
                    f"{g['exact'].mean():.2f}",
                )
            )
    return checks
