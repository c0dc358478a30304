"""Registration v4's selectors of C8 (docs/method.md §5d): the matched learned kernels of the
distortion grid, every estimator on both sides, two-sided admission and the power condition."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from entropic_bound.analysis import (
    estimate_finite,
    pretty_estimator,
    spectra_matrix,
)
from entropic_bound.claims import theory, theory_v3
from entropic_bound.claims.v4.base import Selected, _needs
from entropic_bound.claims.verdict import ILL_POSED, Check, fmt

# ---------------------------------------------------------------- C8: distorted learned kernels


def _distortion(tables, run, s) -> dict | Check:
    """Matched learned kernels of C8's distortion grid: every estimator on every L4 kernel
    (teacher, student seed, β) and on its teacher's L3 kernel (same seed); unmatched L4 kernels
    are kept, with NaN on the L3 side. Estimators admitted two-sided: the signal side on the
    task grid's true spectra (theory.admission), the floor side exact on ≥ admission_rate of
    the matched L3 kernels. The claims estimator not admitted: ill-posed."""
    c = s["C8"]
    bad = _needs(tables, "C8_distortion")
    if bad is not None:
        return bad
    if run is None:
        return Check(None, "the run's config is needed for the estimators' admission")
    df = tables["C8_distortion"]
    names = [c["estimator"], *c["competitors"]]
    S = spectra_matrix(df["spectrum"])
    est = {e: estimate_finite(S, e, s["numerical_tol"]) for e in names}
    key = ["teacher", "seed"]
    base = df[key + ["rung", "beta", "r_star"]].reset_index(drop=True)
    for e in names:
        base[e] = est[e]
    l4 = base[base["rung"] == "L4"]
    l3 = base[base["rung"] == "L3"].drop_duplicates(key)
    m = l4.merge(l3[key + names], on=key, how="left", suffixes=("", "_l3"), indicator=True)
    unmatched = m[m["_merge"] == "left_only"]
    want = [spec for spec in theory_v3.registered_tasks(run, ["L4"])["task_id"]]
    missing = sorted(set(want) - set(l4["teacher"]))
    t = run["task"]
    admitted, notes = [], []
    for e in names:
        ill = theory.admission(e, t["r_star"], t["kappa"], s["estimator_margin"], "task")
        l3_rate = _exact(m[f"{e}_l3"], m["r_star"]).mean() if len(m) else np.nan
        ok_floor = bool(np.isfinite(l3_rate) and l3_rate >= c["admission_rate"] - s["float_slack"])
        if ill is None and ok_floor:
            admitted.append(e)
        else:
            why = ill.measured if ill is not None else f"exact on {fmt(l3_rate)} of matched L3"
            notes.append(f"{pretty_estimator(e)} not admitted ({why})")
    if c["estimator"] not in admitted:
        return Check(None, "; ".join(notes), ILL_POSED)
    extra = ""
    if len(unmatched):
        extra += f"; {len(unmatched)} L4 kernels without their L3 kernel: "
        extra += ", ".join(f"{r.teacher}/seed {r.seed}" for r in unmatched.head(4).itertuples())
    if missing:
        extra += f"; registered teachers without L4 kernels: {', '.join(missing[:4])}"
    return {
        "m": m,
        "admitted": admitted,
        "notes": "; ".join(notes),
        "extra": extra,
        "teachers": int(m["teacher"].nunique()),
        "missing": missing,
    }


def _exact(r_hat, r_star) -> pd.Series:
    r_hat = pd.Series(np.asarray(r_hat, dtype=float))
    hit = np.floor(r_hat + 0.5) == np.asarray(r_star, dtype=float)
    return pd.Series(np.where(r_hat.isna(), np.nan, hit), dtype=float)


def _power(d: dict, s) -> tuple[bool, str]:
    from entropic_bound.claims.v4.primitives import power

    m, c = d["m"], s["C8"]
    drops = {}
    for e in d["admitted"]:
        if e == c["estimator"]:
            continue
        drops[pretty_estimator(e)] = float(
            _exact(m[f"{e}_l3"], m["r_star"]).mean() - _exact(m[e], m["r_star"]).mean()
        )
    return power(drops, c["power_drop"], "distortion")


def distortion_exact(tables, run, s, inputs) -> Selected | Check:
    """The claims estimator exact on the matched learned L4 kernels (every β, seed, teacher);
    a NaN estimate, and a registered teacher without kernels, are unknown."""
    d = _distortion(tables, run, s)
    if isinstance(d, Check):
        return d
    e, m = s["C8"]["estimator"], d["m"]
    hit = _exact(m[e], m["r_star"])
    out = pd.Series(hit.astype("object").where(hit.notna(), np.nan).to_numpy())
    out.index = [f"{t}/s{sd}/β{fmt(b)}" for t, sd, b in zip(m["teacher"], m["seed"], m["beta"])]
    for t in d["missing"]:
        out[f"{t} (no kernels)"] = np.nan
    what = f"learned L4 kernels (distortion grid): {pretty_estimator(e)} = r*"
    sel = Selected(what, out.astype("object"), "kernels", independent=d["teachers"])
    sel.note = d["extra"]
    return sel


def _paired(tables, run, s, score: Callable, higher: bool, what: str) -> Selected | Check:
    d = _distortion(tables, run, s)
    if isinstance(d, Check):
        return d
    m = d["m"]
    scores = {e: score(m, e) for e in d["admitted"]}
    sel = Selected(what, None, "kernels", independent=d["teachers"], scores=scores, n=len(m))
    sel.note = (f"; {d['notes']}" if d["notes"] else "") + d["extra"]
    if len(d["missing"]):  # a registered teacher without kernels: every score is unknown
        sel.scores = {e: np.nan for e in scores}
    sel.power = _power(d, s)
    return sel


def distortion_rate(tables, run, s, inputs):
    """Per admitted estimator, its exact rate on the matched learned L4 kernels (higher is
    better; a NaN estimate makes the rate unknown)."""

    def score(m, e):
        hit = _exact(m[e], m["r_star"])
        return float(hit.mean()) if hit.notna().all() else np.nan

    return _paired(tables, run, s, score, True, "L4 exact rate")


def distortion_shift(tables, run, s, inputs):
    """Per admitted estimator, the mean unsigned shift |r̂_L4 − r̂_L3| between each L4 kernel
    and its teacher's L3 kernel (lower is better; an unmatched or NaN pair makes it unknown)."""

    def score(m, e):
        shift = (m[e] - m[f"{e}_l3"]).abs()
        return float(shift.mean()) if shift.notna().all() else np.nan

    return _paired(tables, run, s, score, False, "mean |r̂_L4 − r̂_L3|")
