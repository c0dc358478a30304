"""C1, deficiency: in the linear surrogate every rank below r* pays the tail energy. (docs/method.md §5)

The statement is the abstract's sentence; the test's thresholds come from config/claims.yaml.
"""

from __future__ import annotations

from collections.abc import Mapping

from entropic_bound.analysis import (
    risk_curves,
)
from entropic_bound.claims import theory
from entropic_bound.claims.checks import (
    deficiency,
    sparse_note,
)
from entropic_bound.claims.verdict import Check, claim, fmt, nan_note

#: the abstract's sentence this claim tests
STATEMENT = (
    "in a linear attention surrogate ... any rank-deficient model incurs unavoidable excess risk"
)


def _t_c1(claims: dict) -> str:
    return f"L0: R(r) ≥ {fmt(claims['C1']['min_ratio_to_theory'])}·R*(r) for every r < r*"


@claim("C1", STATEMENT, needs=("train_metrics",), threshold=_t_c1)
def claim_c1(tables: Mapping, claims: dict) -> list[Check]:
    """L0: every r < r* has median R ≥ min_ratio·R*(r); the empirical/theory ratio per r."""
    k = claims["C1"]["min_ratio_to_theory"]
    d = deficiency(risk_curves(tables["train_metrics"]), "L0")
    if d.empty:
        return [Check(None, "no L0 student below r* (L0 absent, or r* = 1 only)")]
    per_r = d.groupby("rank")["ratio"].min()
    ok = int((d["ratio"] >= k).sum())
    text = (
        f"R/R* ≥ {fmt(k)} on {ok}/{len(d)} (task, r < r*) cells; min ratio {fmt(d['ratio'].min())}, "
        f"median {fmt(d['ratio'].median())}; min ratio per r: "
        + ", ".join(f"r={int(r)}: {fmt(v)}" for r, v in per_r.items())
        + nan_note(d["R"], "R")
        + sparse_note(d, risk_curves(tables["train_metrics"]), "L0")
    )
    head = ("L0 min R/R* over r < r*", float(d["ratio"].min()), ">=", k, len(d))
    return [Check(bool(ok == len(d)), text, headline=head)]


#: the registered claim (claims/registry.py lists them in order)
CLAIM = claim_c1


# ---------------------------------------------------------------- registration v2


def _t_c1_v2(v2: dict) -> str:
    return f"L0: R(r) ≥ {fmt(v2['deficiency_factor'])}·R*_L0(r) (exact tail) for every r < r*"


@claim("C1", STATEMENT, ("train_metrics", "bounds"), _t_c1_v2, registration="v2")
def claim_c1_v2(tables: Mapping, v2: dict, run: dict | None) -> list[Check]:
    """L0: every trained (task, r < r*) cell has median R ≥ factor·R*(r), R*(r) the
    Eckart–Young tail (exact); at least min_cases cells."""
    cells = theory.with_bounds(risk_curves(tables["train_metrics"]), tables["bounds"], 0.0)
    cells = cells[(cells["rung"] == "L0") & (cells["rank"] < cells["r_star"])]
    ratio = cells["R"] / cells["bound"]
    check = theory.counted(
        cells["R"] >= v2["deficiency_factor"] * cells["bound"],
        1.0,
        v2,
        f"L0: R ≥ {fmt(v2['deficiency_factor'])}·R*(r) on (task, r < r*) cells",
        "min R/R*_L0(r) (cells)",
    )
    check.measured += f"; min R/R* {fmt(ratio.min())}, median {fmt(ratio.median())}"
    check.headline = (
        "min R/R*_L0(r)",
        float(ratio.min()),
        ">=",
        v2["deficiency_factor"],
        len(cells),
    )
    return [check]


CLAIM_V2 = claim_c1_v2


# ---------------------------------------------------------------- registration v3


def _t_c1_v3(v3: dict) -> str:
    return f"L0: R̂*_L0(r) ≥ {fmt(v3['deficiency_factor'])}·tail(r) for every (task, r < r*)"


@claim("C1", STATEMENT, ("bounds",), _t_c1_v3, registration="v3")
def claim_c1_v3(tables: Mapping, v3: dict, run: dict | None) -> list[Check]:
    """The best-known rank-r L0 model (the exact tail, and every trained student) keeps at least
    half the Eckart–Young tail, on every registered (task, r < r*) cell (docs/method.md §5c)."""
    from entropic_bound.claims import checks_v3, theory_v3

    name = "C1 deficiency magnitude (L0)"
    bad = theory_v3.needs_run(run, name)
    if bad is not None:
        return [bad]
    tasks = theory_v3.registered_tasks(run, ["L0"])
    return [checks_v3.deficiency_v3(tables["bounds"], tasks, "L0", v3, run, name)]


CLAIM_V3 = claim_c1_v3
