"""C8, the energy effective rank is the estimator robust to softmax distortion. (docs/method.md §5)

The statement is the abstract's sentence; the test's thresholds come from config/claims.yaml.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from entropic_bound.analysis import (
    estimate_finite,
    exact_summary,
    full_rank_students,
    pretty_estimator,
    spectra_matrix,
)
from entropic_bound.claims import theory
from entropic_bound.claims.verdict import (
    ILL_POSED,
    INSUFFICIENT,
    Check,
    bound,
    claim,
    fmt,
    undecided_note,
    unknown_note,
)
from entropic_bound.core.estimators import energy_tau, estimate, round_rank
from entropic_bound.core.rungs import is_softmax

#: the abstract's sentence this claim tests
STATEMENT = "the energy effective rank [is] the estimator robust to softmax distortion"


def _t_c8(claims: dict) -> str:
    c = claims["C8"]
    return (
        f"{c['rung']} learned full-rank kernels: no estimator with smaller mean |err| than "
        f"{pretty_estimator(claims['estimator'])}, which is exact on ≥ {c['min_exact_rate']:.0%}"
    )


@claim("C8", STATEMENT, needs=("train_metrics",), threshold=_t_c8)
def claim_c8(tables: Mapping, claims: dict) -> list[Check]:
    """Learned full-rank kernels of the softmax rung: no estimator of C8's list (claims.yaml,
    not the run config) has a smaller mean |error| than the claims estimator, which is exact
    on ≥ min_exact_rate. A NaN spectrum is an unknown student, decided by the bounding rule."""
    c, est = claims["C8"], claims["estimator"]
    names = list(dict.fromkeys([*c["estimators"], est]))
    full = full_rank_students(tables["train_metrics"])
    full = full[full["rung"] == c["rung"]]
    if full.empty:
        return [Check(None, f"no full-rank {c['rung']} student")]
    S = spectra_matrix(full["spectrum"])
    r_hat = {e: estimate_finite(S, e, tol=claims["numerical_tol"]) for e in names}
    r_star = full["r_star"].to_numpy()
    summ = {e: exact_summary(r_hat[e], r_star) for e in names}
    ours = summ[est]
    others = {e: s for e, s in summ.items() if e != est}
    tie = c["tie_tolerance"]
    # the competitors with a smaller mean |err| even with every unknown student counted for r_E
    err = {e: _filled_error(r_hat[e], r_star, e == est) for e in names}
    beaten = [e for e in others if err[e] < err[est] - tie]
    text = f"{pretty_estimator(est)} mean |err| {fmt(ours['mean_abs_error'])}"
    if others:
        best = min(others, key=lambda e: others[e]["mean_abs_error"])
        text += f"; best other {pretty_estimator(best)} {fmt(others[best]['mean_abs_error'])}"
    if beaten:
        text += f"; smaller: {', '.join(pretty_estimator(e) for e in beaten)}"
    unknown = np.isnan(np.column_stack(list(r_hat.values()))).any(axis=1)
    text += unknown_note(
        list(full.loc[unknown, "task_id"] + "/seed " + full.loc[unknown, "seed"].astype(str)),
        "students",
    )

    def none_smaller(fav: bool) -> bool:
        err = {e: _filled_error(r_hat[e], r_star, (e == est) == fav) for e in names}
        return not any(err[e] < err[est] - tie for e in others)

    def exact_enough(fav: bool) -> bool:
        hit = np.where(np.isnan(r_hat[est]), fav, round_rank(r_hat[est]) == r_star)
        return bool(hit.mean() >= c["min_exact_rate"])

    first, second = bound(none_smaller), bound(exact_enough)
    return [
        Check(first, text + undecided_note(first)),
        Check(
            headline=(
                f"{pretty_estimator(est)} exact rate on learned {c['rung']}",
                ours["exact_rate"],
                ">=",
                c["min_exact_rate"],
                ours["n"],
            ),
            passed=second,
            measured=f"{pretty_estimator(est)} exact {ours['exact']}/{ours['n']} = "
            f"{ours['exact_rate']:.2f}" + undecided_note(second),
        ),
    ]


def _filled_error(r_hat: np.ndarray, r_star: np.ndarray, good: bool) -> float:
    """Mean |r̂ − r*| with an unknown (NaN) estimate's error 0 when it speaks for the claim
    (``good``) and infinite when against it (the bounding rule)."""
    err = np.abs(r_hat - r_star)
    return float(np.where(np.isnan(err), 0.0 if good else np.inf, err).mean())


#: the registered claim (claims/registry.py lists them in order)
CLAIM = claim_c8


# ---------------------------------------------------------------- registration v2


def _t_c8_v2(v2: dict) -> str:
    return (
        "where softmax distorts the spectrum (data-only P_attn kernels of L4 at σ = 0 over β; the "
        "learned full-rank kernels of the softmax ladder rungs): the best admitted r_E(τ) has a "
        "smaller mean |err| than every other estimator (a tie is not a win)"
    )


@claim("C8", STATEMENT, ("frontier", "train_metrics"), _t_c8_v2, registration="v2")
def claim_c8_v2(tables: Mapping, v2: dict, run: dict | None) -> list[Check]:
    """Rank the estimators on the two data sets where softmax distorts; on each, the best
    admitted energy rank must beat every non-energy estimator by more than the tie tolerance.
    A data set on which every estimator is exact carries no evidence (insufficient data)."""
    c = v2["C8"]
    if run is None:
        return [Check(None, "the run's config is needed for the estimators' admission")]
    f = tables["frontier"]
    f = f[(f["class"] == c["data_only_class"]) & (f["predictor"] == "P_attn") & (f["sigma"] == 0)]
    errors_do = {
        e: (g["r_hat"] - g["r_star"]).abs()
        for e, g in f.groupby("estimator")
        if e in c["estimators"]
    }
    fr = run["frontier"]
    checks = [_ranking(errors_do, c, v2, (fr["r_star"], fr["kappa"]), "data-only P_attn L4")]
    full = full_rank_students(tables["train_metrics"])
    full = full[full["rung"].map(is_softmax)]
    S = spectra_matrix(full["spectrum"])
    errors_tr = {
        e: pd.Series(np.abs(estimate(S, e, tol=v2["numerical_tol"]) - full["r_star"].to_numpy()))
        for e in c["estimators"]
    }
    t = run["task"]
    checks.append(_ranking(errors_tr, c, v2, (t["r_star"], t["kappa"]), "learned softmax-ladder"))
    return checks


def _ranking(errors: dict, c: dict, v2: dict, grid, where: str) -> Check:
    if not errors or min(len(e) for e in errors.values()) == 0:
        return Check(None, f"{where}: no kernels")
    mean = {e: float(v.mean()) for e, v in errors.items()}
    n = min(len(v) for v in errors.values())
    order = ", ".join(
        f"{pretty_estimator(e)} {fmt(m)}" for e, m in sorted(mean.items(), key=lambda x: x[1])
    )
    energy = [
        e
        for e in mean
        if energy_tau(e) is not None
        and theory.admission(e, grid[0], grid[1], v2["estimator_margin"], where) is None
    ]
    others = [e for e in mean if energy_tau(e) is None]
    tie = c["tie_tolerance"]
    text = f"{where} ({n} kernels), mean |err|: {order}"
    if not energy or not others:
        return Check(None, f"{text}; no admitted energy rank or no competitor", INSUFFICIENT)
    best = min(energy, key=mean.get)
    rival = min(others, key=mean.get)
    margin = mean[rival] - mean[best]
    head = (f"{where}: best other − best r_E mean |err|", margin, ">=", tie, n)
    if n < v2["min_cases"]:
        return Check(
            None, f"{text} (insufficient data: < {v2['min_cases']} kernels)", INSUFFICIENT, head
        )
    if max(mean.values()) <= tie:
        return Check(
            None,
            f"{text}; every estimator exact: no distortion to rank (insufficient data)",
            INSUFFICIENT,
            head,
        )
    return Check(bool(margin > tie), f"{text}; best r_E: {pretty_estimator(best)}", headline=head)


CLAIM_V2 = claim_c8_v2


# ---------------------------------------------------------------- registration v3


def _t_c8_v3(v3: dict) -> str:
    c = v3["C8"]
    return (
        f"data-only P_attn, σ = 0, n > d, {c['class']} matched with {c['control']}: "
        f"{pretty_estimator(c['estimator'])} (admitted on both sides) has a smaller {c['class']} "
        f"mean |err| and a smaller robustness (mean |err| {c['class']} − {c['control']}) than "
        f"each of {', '.join(c['competitors'])} (a tie is not a win)"
    )


@claim("C8", STATEMENT, ("frontier",), _t_c8_v3, registration="v3")
def claim_c8_v3(tables: Mapping, v3: dict, run: dict | None) -> list[Check]:
    """The energy rank against every competitor where softmax distorts and nothing else does:
    each L4 cell beside its matched L3 cell (docs/method.md §5c). A NaN estimate, or a cell
    whose match is absent, is unknown: each check is decided by the bounding rule (for the
    claim: an error of 0 for r_E and an infinite one for a competitor; against it: the
    reverse), and the unknown cells are named."""
    from entropic_bound.claims import theory_v3

    c = v3["C8"]
    names = ("C8 r_E most accurate on L4", "C8 r_E most robust (L4 − L3)")
    if run is None:
        return [
            Check(None, "the run's config is needed for the estimator's admission", name=names[0])
        ]
    est, f = c["estimator"], tables["frontier"]
    errs = {e: _matched(f, e, c) for e in [est, *c["competitors"]]}
    matched = errs[est]
    units = theory_v3.units_of(matched).nunique() if len(matched) else 0
    absent = [e for e, m in errs.items() if m.empty]
    if absent:
        text = f"no {c['class']} P_attn rows at σ = 0, n > d for: {', '.join(absent)}"
        return [Check(None, text, name=n) for n in names]
    fr = run["frontier"]
    ill = theory.admission(est, fr["r_star"], fr["kappa"], v3["estimator_margin"], "frontier")
    if ill is None:
        ill = _floor_side(est, matched, c)
    if ill is not None:
        return [Check(None, ill.measured, ill.status, name=n) for n in names]
    unknown = sorted({cell for m in errs.values() for cell in _unknown_cells(m)})
    scores = {fav: _scores(errs, est, fav) for fav in (False, True)}
    l4, rob = scores[False]  # as stated: the unknown cells counted against the claim
    rates = {e: float(theory_v3.adverse(m["hit"]).mean()) for e, m in errs.items()}
    text = (
        f"{units} teachers, {len(matched)} matched cells; {c['class']} mean |err| / robustness / "
        "exact: "
        + ", ".join(
            f"{pretty_estimator(e)} {fmt(l4[e])}/{fmt(rob[e])}/{rates[e]:.2f}" for e in errs
        )
    ) + unknown_note(unknown)
    tie = c["tie_tolerance"]
    checks = []
    for i, (name, what) in enumerate(((names[0], "mean |err|"), (names[1], "robustness"))):

        def margin(fav: bool, i: int = i) -> float:
            score = scores[fav][i]
            return min(score[e] for e in c["competitors"]) - score[est]

        score = scores[False][i]
        rival = min(c["competitors"], key=score.get)
        head = (f"{what}: best competitor − {pretty_estimator(est)}", margin(False), ">=", tie)
        head += (units,)
        if units < v3["min_tasks"]:
            checks.append(Check(None, f"{text} (insufficient data)", INSUFFICIENT, head, name))
        elif max(l4.values()) <= tie and max(abs(v) for v in rob.values()) <= tie:
            checks.append(Check(None, f"{text}; no distortion to rank", INSUFFICIENT, head, name))
        else:
            ok = bound(lambda fav: margin(fav) > tie)
            line = f"{what}: {pretty_estimator(est)} {fmt(score[est])} vs best competitor "
            line += f"{pretty_estimator(rival)} {fmt(score[rival])}" + undecided_note(ok)
            checks.append(Check(ok, f"{line} ({text})" if not checks else line, None, head, name))
    return checks


def _matched(f: pd.DataFrame, estimator: str, c: dict) -> pd.DataFrame:
    """The estimator's L4 cells (P_attn, σ = 0, n > d) beside their matched L3 cells, outer
    joined: a cell whose partner is absent stays, with the partner's error and hit NaN, and
    ``_merge`` says which side it has."""
    from entropic_bound.claims import theory_v3

    cells = dict(predictor="P_attn", sigma=lambda s: s == 0, n=lambda n: n > f.loc[n.index, "d"])
    key = ["value_map", "n", "r_star", "seed"]
    l4 = theory_v3.frontier_rows(f, estimator, **{"class": c["class"]}, **cells)
    l3 = theory_v3.frontier_rows(f, estimator, **{"class": c["control"]}, **cells)
    m = l4.merge(
        l3[key + ["err", "hit"]], on=key, how="outer", suffixes=("", "_ctl"), indicator=True
    )
    return m.assign(
        err=m["err"].astype(float),
        err_ctl=m["err_ctl"].astype(float),
        cell=m[key].astype(str).agg("/".join, axis=1) + " β=" + m["beta"].astype(str),
    )


def _unknown_cells(m: pd.DataFrame) -> list[str]:
    """The matched cells with an unknown error on either side (a NaN or an absent partner)."""
    return list(m.loc[m["err"].isna() | m["err_ctl"].isna(), "cell"])


def _floor_side(est: str, matched: pd.DataFrame, c: dict) -> Check | None:
    """r_E admitted on the floor side: exact on every matched L3 cell. A known inexact cell
    makes it ill-posed; an unknown one (a NaN, an absent L3 cell) leaves admission open."""
    hit = matched["hit_ctl"].astype("boolean")
    bad, open_ = int((hit == False).sum()), matched.loc[hit.isna().to_numpy(), "cell"]  # noqa: E712
    if bad:
        return Check(
            None,
            f"{est} not admitted on the floor side: inexact on {bad}/{len(hit)} matched "
            f"{c['control']} cells, where P_attn is exact in theory",
            ILL_POSED,
        )
    if len(open_):
        return Check(
            None,
            f"{est}'s floor-side admission undecided: its {c['control']} error is unknown on "
            f"matched cells" + unknown_note(list(open_)),
        )
    return None


def _scores(errs: dict, est: str, favourable: bool) -> tuple[dict, dict]:
    """({estimator: L4 mean |err|}, {estimator: robustness}) with the unknown errors filled for
    the claim (``favourable``) or against it: r_E's L4 error 0 or ∞ and its L3 error ∞ or 0, a
    competitor's the reverse (robustness is L4 − L3, so a large L3 error flatters it)."""
    worst, best = (np.inf, 0.0)
    l4, rob = {}, {}
    for e, m in errs.items():
        ours = e == est
        good = ours == favourable  # fill in r_E's favour or the competitor's
        a = float(m["err"].fillna(best if good else worst).mean())
        b = float(m["err_ctl"].fillna(worst if good else best).mean())
        l4[e], rob[e] = a, a - b
    return l4, rob


CLAIM_V3 = claim_c8_v3
