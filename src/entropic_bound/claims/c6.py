"""C6, the ladder: what breaks the static picture is input conditioning. (docs/method.md §5)

The statement is the abstract's sentence; the test's thresholds come from config/claims.yaml.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from entropic_bound.analysis import (
    intrinsic_ranks,
    risk_curves,
    spearman,
    spearman_fillings,
)
from entropic_bound.claims import theory
from entropic_bound.claims.checks import (
    absent_rungs,
)
from entropic_bound.claims.verdict import (
    INSUFFICIENT,
    Check,
    bound,
    claim,
    fmt,
    undecided_note,
    unknown_note,
)
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
    mean static-student R; a NaN in a rung makes its mean unknown, and the trend is decided by
    the bounding rule over every value it could take)."""
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
    lam = per_rung["lambda"].to_numpy(dtype=float)
    share, risk = (
        _bounded_trend(lam, per_rung[col], sense, limit, lad.loc[lad[col].isna(), "task_id"])
        for col, sense, limit in (
            ("static_fit_share", "<=", c["max_spearman_share"]),
            ("static_student_R", ">=", c["min_spearman_risk"]),
        )
    )
    return [
        Check(
            share[0],
            f"{where}; Spearman(λ, share) = {fmt(share[1])} (shares "
            + ", ".join(fmt(x) for x in per_rung["static_fit_share"])
            + ")"
            + share[2],
        ),
        Check(
            risk[0],
            f"Spearman(λ, static R) = {fmt(risk[1])} (R "
            + ", ".join(fmt(x) for x in per_rung["static_student_R"])
            + ")"
            + risk[2],
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
    bad = theory.refusal_on_task_grid(est, run, v2) or theory.sigma_not_made(run)
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


# ---------------------------------------------------------------- registration v3


def _t_c6_v3(v3: dict) -> str:
    return _t_c6_v2(v3).replace("r_emp(ε_task)", "r_emp(best of seeds × restarts, audited ε_task)")


@claim(
    "C6",
    STATEMENT,
    ("data_only_predictions", "train_metrics", "bounds"),
    _t_c6_v3,
    registration="v3",
)
def claim_c6_v3(tables: Mapping, v3: dict, run: dict | None) -> list[Check]:
    """The ladder over the registered tasks: a static-rung task matches only if P_static = r_emp
    = r*; a NaN or absent P_static, knee or rung mean is unknown, and each check is decided by
    the bounding rule (§5c, "Faults, in every registration")."""
    from entropic_bound.claims import checks_v3, theory_v3

    c, est = v3["C6"], v3["estimator"]
    names = ("C6 static rungs match", "C6 attention rungs miss", "C6 share falls", "C6 risk rises")
    bad = theory_v3.estimator_refusal(run, est, v3, names[0])
    if bad is not None:
        return [bad]
    if theory.sigma_not_made(run) is not None:  # every check reads P_static at σ = 0
        return [theory.sigma_not_made(run, 0.0, n) for n in names]
    preds, metrics, bounds = (
        tables[k] for k in ("data_only_predictions", "train_metrics", "bounds")
    )
    s = theory_v3.registered_tasks(run, c["static_rungs"])
    a = theory_v3.registered_tasks(run, c["attention_rungs"])
    if not theory_v3.has_best_bounds(bounds):  # no target: every knee unknown
        knee = pd.Series(np.nan, index=s["task_id"].to_numpy(), dtype="object")
    else:
        knee = checks_v3.knee_outcomes(metrics, bounds, s, v3)
    p_s = checks_v3.predicted_exact(preds, est, "P_static", 0.0, s)
    # both must hold: a known miss of either decides the task, else an unknown one leaves it open
    both = p_s.astype("boolean") & knee.astype("boolean")
    static = theory_v3.rate_check(
        names[0],
        both,
        c["min_match_rate_static_rungs"],
        v3,
        f"P_static = r_emp = r* on {', '.join(c['static_rungs'])}",
        "static-rung match rate",
    )
    if not theory_v3.has_best_bounds(bounds):
        static.measured += "; bounds.csv has no best-known bound (column R_best): no knee known"
    checks = [
        static,
        theory_v3.rate_check(
            names[1],
            checks_v3.predicted_exact(preds, est, "P_static", 0.0, a),
            c["max_match_rate_attention_rungs"],
            v3,
            f"P_static = r* on {', '.join(c['attention_rungs'])}",
            "attention-rung match rate",
            at_most=True,
        ),
    ]
    t = intrinsic_ranks(preds, est, metrics, v3["epsilon"])
    return checks + _trend_v3(t, run, c, v3, names[2:])


def _trend_v3(t, run: dict, c: dict, v3: dict, names) -> list[Check]:
    """Spearman trends over the registered ladder rungs (L2, Lλ…, L4): per rung the mean
    static-fit share and static-student R over its registered tasks; a rung with a missing or
    NaN value is unknown, and each trend is decided by the bounding rule over every value the
    unknown rungs could take (:func:`spearman_fillings`), naming them."""
    from entropic_bound.claims import theory_v3
    from entropic_bound.core.rungs import ladder_lambda

    tasks = theory_v3.registered_tasks(run)
    tasks = tasks[tasks["rung"].map(ladder_lambda).notna()]
    got = t.set_index("task_id")[["static_fit_share", "static_student_R"]]
    vals = got.reindex(tasks["task_id"]).assign(lam=tasks["rung"].map(ladder_lambda).to_numpy())
    per = vals.groupby("lam").agg(
        share=("static_fit_share", lambda x: x.mean() if x.notna().all() else np.nan),
        risk=("static_student_R", lambda x: x.mean() if x.notna().all() else np.nan),
    )
    where = f"{len(per)} ladder rungs"
    if len(per) < v3["min_ladder_rungs"]:
        text = f"{where}; a Spearman trend needs ≥ {v3['min_ladder_rungs']} (insufficient data)"
        return [Check(None, text, INSUFFICIENT, name=n) for n in names]
    lam = per.index.to_numpy(dtype=float)
    share, risk = (
        _bounded_trend(lam, per[key], sense, limit, vals.index[vals[col].isna()])
        for key, col, sense, limit in (
            ("share", "static_fit_share", "<=", c["max_spearman_share"]),
            ("risk", "static_student_R", ">=", c["min_spearman_risk"]),
        )
    )
    n = len(per)
    return [
        Check(
            share[0],
            f"{where}; Spearman(λ, share) = {fmt(share[1])}{share[2]}",
            headline=("Spearman(λ, static-fit share)", share[1], "<=", c["max_spearman_share"], n),
            name=names[0],
        ),
        Check(
            risk[0],
            f"Spearman(λ, static R) = {fmt(risk[1])}{risk[2]}",
            headline=("Spearman(λ, static-student R)", risk[1], ">=", c["min_spearman_risk"], n),
            name=names[1],
        ),
    ]


def _bounded_trend(lam: np.ndarray, values: pd.Series, sense: str, limit: float, tasks=()):
    """(passed, rho, note) of Spearman(λ, values) held to ``limit``; with unknown (NaN) rungs
    it is decided by the bounding rule over every value they could take, and the note names
    them, the tasks that left them unknown (``tasks``) and the range of rho they allow."""
    x = values.to_numpy(dtype=float)
    holds = (lambda r: r <= limit) if sense == "<=" else (lambda r: r >= limit)
    if not np.isnan(x).any():
        rho = spearman(lam, x)
        return bool(holds(rho)), rho, ""
    rhos = spearman_fillings(lam, x)
    gone = "; unknown on λ = " + ", ".join(fmt(v) for v in lam[np.isnan(x)])
    gone += unknown_note([str(t) for t in tasks], "tasks")
    if rhos is None:  # too many orders to enumerate: no filling is ruled out
        return None, np.nan, gone + undecided_note(None)
    ok = np.array([bool(holds(r)) for r in rhos])
    passed = bound(lambda fav: bool(ok.any() if fav else ok.all()))
    note = (
        f"{gone}; over every value they could take rho spans "
        f"{fmt(np.nanmin(rhos))} to {fmt(np.nanmax(rhos))}" + undecided_note(passed)
    )
    return passed, np.nan, note


CLAIM_V3 = claim_c6_v3
