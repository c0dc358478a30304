"""C6, the ladder: what breaks the static picture is input conditioning. (docs/method.md §5)

The statement is the abstract's sentence; the test's thresholds come from config/claims.yaml.
"""

from __future__ import annotations

from collections.abc import Mapping

from entropic_bound.analysis import (
    intrinsic_ranks,
    risk_curves,
    spearman,
)
from entropic_bound.claims import theory
from entropic_bound.claims.checks import (
    absent_rungs,
)
from entropic_bound.claims.verdict import INSUFFICIENT, Check, claim, fmt
from entropic_bound.core.rungs import sort_rungs

#: the abstract's sentence this claim tests
STATEMENT = (
    "it is not softmax and not a rank constraint, but the input-conditioned nature of "
    "attention's mixing operator, which a static weight kernel cannot summarize"
)


def _t_c6(claims: dict) -> str:
    c = claims["C6"]
    return (
        f"P_static = r_emp = r* on ≥ {c['min_match_rate_static_rungs']:.0%} of "
        f"{', '.join(c['static_rungs'])}; P_static = r* on ≤ "
        f"{c['max_match_rate_attention_rungs']:.0%} of {', '.join(c['attention_rungs'])}; "
        f"Spearman(λ, share) ≤ {fmt(c['max_spearman_share'])}, "
        f"Spearman(λ, static R) ≥ {fmt(c['min_spearman_risk'])}"
    )


@claim("C6", STATEMENT, needs=("data_only_predictions", "train_metrics"), threshold=_t_c6)
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
    return [_static_rungs(t, c), _attention_rungs(t, c), *_trend(t, c)]


def _static_rungs(t, c: dict) -> Check:
    """P_static = r_emp = r* on the static rungs."""
    static_rungs = list(c["static_rungs"])
    s = t[t["rung"].isin(static_rungs)]
    if s.empty:
        return Check(None, f"no {', '.join(static_rungs)} tasks")
    else:
        hit = (s["P_static"] == s["r_star"]) & (s["r_emp"] == s["r_star"])
        per = ", ".join(f"{r} {hit[s['rung'] == r].mean():.2f}" for r in sort_rungs(s["rung"]))
        head = ("P_static = r_emp = r* rate on the static rungs", float(hit.mean()), ">=")
    return Check(
        headline=(*head, c["min_match_rate_static_rungs"], len(s)),
        passed=bool(hit.mean() >= c["min_match_rate_static_rungs"]),
        measured=f"P_static = r_emp = r* on {int(hit.sum())}/{len(s)} = {hit.mean():.2f} "
        f"of static-rung tasks ({per}){absent_rungs(s['rung'], static_rungs)}",
    )


def _attention_rungs(t, c: dict) -> Check:
    """P_static = r* on few of the attention rungs' tasks."""
    att_rungs = list(c["attention_rungs"])
    a = t[t["rung"].isin(att_rungs)]
    if a.empty:
        return Check(None, f"no {', '.join(att_rungs)} tasks")
    else:
        hit = a["P_static"] == a["r_star"]
    return Check(
        bool(hit.mean() <= c["max_match_rate_attention_rungs"]),
        f"P_static = r* on {int(hit.sum())}/{len(a)} = {hit.mean():.2f} of "
        f"attention tasks{absent_rungs(a['rung'], att_rungs)}",
    )


def _trend(t, c: dict) -> list[Check]:
    """Along λ, the static-fit share falls and the static-student R rises (Spearman)."""
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
        return [Check(None, f"{where}; need ≥ {need} of L2, Lλ, L4 for a monotone trend")]
    else:
        rho_s = spearman(per_rung["lambda"], per_rung["static_fit_share"])
        rho_r = spearman(per_rung["lambda"], per_rung["static_student_R"])
    return [
        Check(
            bool(rho_s <= c["max_spearman_share"]),
            f"{where}; Spearman(λ, share) = {fmt(rho_s)} (shares "
            + ", ".join(fmt(x) for x in per_rung["static_fit_share"])
            + ")",
        ),
        Check(
            bool(rho_r >= c["min_spearman_risk"]),
            f"Spearman(λ, static R) = {fmt(rho_r)} (R "
            + ", ".join(fmt(x) for x in per_rung["static_student_R"])
            + ")",
        ),
    ]


#: the registered claim (claims/registry.py lists them in order)
CLAIM = claim_c6


# ---------------------------------------------------------------- registration v2


def _t_c6_v2(v2: dict) -> str:
    c = v2["C6"]
    return (
        f"P_static = r_emp(ε_task) = r* on ≥ {c['min_match_rate_static_rungs']:.0%} of "
        f"{', '.join(c['static_rungs'])}; P_static = r* on ≤ "
        f"{c['max_match_rate_attention_rungs']:.0%} of {', '.join(c['attention_rungs'])}; over "
        f"≥ {v2['min_ladder_rungs']} ladder rungs Spearman(λ, share) ≤ {fmt(c['max_spearman_share'])}, "
        f"Spearman(λ, static R) ≥ {fmt(c['min_spearman_risk'])}"
    )


@claim(
    "C6",
    STATEMENT,
    ("data_only_predictions", "train_metrics", "bounds"),
    _t_c6_v2,
    registration="v2",
)
def claim_c6_v2(tables: Mapping, v2: dict, run: dict | None) -> list[Check]:
    """The ladder under v2: the knee is read at each task's ε_task, rates state denominators,
    the trend needs ≥ min_ladder_rungs rungs; NaN counts against the claim."""
    c, est = v2["C6"], v2["estimator"]
    bad = theory.refusal_on_task_grid(est, run, v2)
    if bad is not None:
        return [bad]
    curves = risk_curves(tables["train_metrics"])
    eps = theory.epsilon_task(curves, tables["bounds"], v2)
    t = intrinsic_ranks(tables["data_only_predictions"], est, tables["train_metrics"], eps)
    s = t[t["rung"].isin(c["static_rungs"])]
    a = t[t["rung"].isin(c["attention_rungs"])]
    checks = [
        theory.counted(
            (s["P_static"] == s["r_star"]) & (s["r_emp"] == s["r_star"]),
            c["min_match_rate_static_rungs"],
            v2,
            f"P_static = r_emp = r* on {', '.join(c['static_rungs'])}",
            "static-rung match rate",
        ),
        theory.counted(
            a["P_static"] == a["r_star"],
            c["max_match_rate_attention_rungs"],
            v2,
            f"P_static = r* on {', '.join(c['attention_rungs'])}",
            "attention-rung match rate",
            at_most=True,
        ),
    ]
    return checks + _trend_v2(t, c, v2)


def _trend_v2(t, c: dict, v2: dict) -> list[Check]:
    lad = t.dropna(subset=["lambda"])
    per = lad.groupby("lambda")[["static_fit_share", "static_student_R"]].mean().reset_index()
    where = f"{len(per)} ladder rungs: " + ", ".join(sort_rungs(lad["rung"]))
    if len(per) < v2["min_ladder_rungs"]:
        text = f"{where}; a Spearman trend needs ≥ {v2['min_ladder_rungs']} (insufficient data)"
        return [Check(None, text, INSUFFICIENT)]
    rho_s = spearman(per["lambda"], per["static_fit_share"])
    rho_r = spearman(per["lambda"], per["static_student_R"])
    n = len(per)
    return [
        Check(
            bool(rho_s <= c["max_spearman_share"]),
            f"{where}; Spearman(λ, share) = {fmt(rho_s)}",
            headline=("Spearman(λ, static-fit share)", rho_s, "<=", c["max_spearman_share"], n),
        ),
        Check(
            bool(rho_r >= c["min_spearman_risk"]),
            f"Spearman(λ, static R) = {fmt(rho_r)}",
            headline=("Spearman(λ, static-student R)", rho_r, ">=", c["min_spearman_risk"], n),
        ),
    ]


CLAIM_V2 = claim_c6_v2
