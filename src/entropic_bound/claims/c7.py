"""C7, the attention-native rank restores deficiency, achievability and recovery. (docs/method.md §5)

The statement is the abstract's sentence; the test's thresholds come from config/claims.yaml.
"""

from __future__ import annotations

from collections.abc import Mapping

from entropic_bound.analysis import (
    empirical_knees,
    pretty_estimator,
    risk_curves,
)
from entropic_bound.claims.checks import (
    achievability,
    achievability_v2,
    deficiency,
    deficiency_v2,
    knee_v2,
    recovery,
    recovery_v2,
    sparse_note,
)
from entropic_bound.claims.verdict import Check, claim, fmt, nan_note

#: the abstract's sentence this claim tests
STATEMENT = (
    "under this [attention-native] definition the full Entropic Bound structure (deficiency, "
    "achievability, recovery) is restored for both linear and softmax attention"
)


def _t_c7(claims: dict) -> str:
    c = claims["C7"]
    floor = c["min_deficiency_factor"] * claims["epsilon"]
    return (
        f"on each of {', '.join(c['rungs'])}: R(r) ≥ {fmt(floor)} for r < r*; "
        f"R(r*) ≤ {fmt(c['max_risk'])}; {pretty_estimator(claims['estimator'])}(learned) = r* "
        f"on ≥ {claims['C3']['min_exact_rate']:.0%}; r_emp = r* on ≥ {c['min_exact_rate']:.0%}"
    )


@claim("C7", STATEMENT, needs=("train_metrics",), threshold=_t_c7)
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
        d = deficiency(curves, rung)
        if d.empty:
            checks.append(Check(None, f"{rung}: no student below r*"))
        else:
            ok = int((d["R"] >= floor).sum())
            checks.append(
                Check(
                    bool(ok == len(d)),
                    f"{rung}: R ≥ {fmt(floor)} on {ok}/{len(d)} (task, r < r*) cells "
                    f"(min R {fmt(d['R'].min())}, R/R* min {fmt(d['ratio'].min())}, "
                    f"median {fmt(d['ratio'].median())})"
                    + nan_note(d["R"], "R")
                    + sparse_note(d, curves, rung),
                )
            )
        checks.append(achievability(curves, rung, c["max_risk"]))
        checks.append(recovery(metrics, rung, claims))
        knees = empirical_knees(curves[curves["rung"] == rung], eps)
        hit = knees["r_emp"] == knees["r_star"]
        head = (f"{rung} r_emp = r* rate", float(hit.mean()), ">=", c["min_exact_rate"], len(knees))
        checks.append(
            Check(
                bool(hit.mean() >= c["min_exact_rate"]),
                f"{rung}: r_emp = r* on {int(hit.sum())}/{len(knees)} = {hit.mean():.2f}",
                headline=head,
            )
        )
    # the headline: the knee of the last rung (softmax attention, L4, in the registration)
    knee_heads = [ch.headline for ch in checks if ch.headline and "r_emp" in ch.headline[0]]
    for ch in checks:
        ch.headline = None
    if knee_heads:
        checks[-1].headline = knee_heads[-1]
    return checks


#: the registered claim (claims/registry.py lists them in order)
CLAIM = claim_c7


# ---------------------------------------------------------------- registration v2


def _t_c7_v2(v2: dict) -> str:
    c = v2["C7"]
    return (
        f"on each of {', '.join(c['rungs'])}: R(r) ≥ {fmt(v2['deficiency_factor'])}·R*_c(r) for "
        f"r < r*; R(r*) ≤ ε_task; {pretty_estimator(v2['estimator'])}(learned) = r* on ≥ "
        f"{c['min_exact_rate_recovery']:.0%}; r_emp(ε_task) = r* on ≥ {c['min_exact_rate']:.0%}"
    )


@claim("C7", STATEMENT, ("train_metrics", "bounds"), _t_c7_v2, registration="v2")
def claim_c7_v2(tables: Mapping, v2: dict, run: dict | None) -> list[Check]:
    """L3 and L4 with the QK kernel, each against its own class bound: deficiency,
    achievability at ε_task, recovery and the knee; each rung separately."""
    c = v2["C7"]
    metrics, bounds = tables["train_metrics"], tables["bounds"]
    curves = risk_curves(metrics)
    checks = []
    for rung in c["rungs"]:
        if not (curves["rung"] == rung).any():
            checks.append(Check(None, f"{rung}: absent"))
            continue
        checks.append(deficiency_v2(curves, bounds, rung, v2))
        checks.append(achievability_v2(curves, bounds, rung, v2))
        checks += recovery_v2(metrics, rung, v2, run, c["min_exact_rate_recovery"])
        checks.append(knee_v2(curves, bounds, rung, v2, c["min_exact_rate"]))
    return checks


CLAIM_V2 = claim_c7_v2


# ---------------------------------------------------------------- registration v3


def _t_c7_v3(v3: dict) -> str:
    c = v3["C7"]
    return (
        f"on each of {', '.join(c['rungs'])}: R̂*_c(r) ≥ {fmt(v3['deficiency_factor'])}·tail(r) "
        f"for every r < r*; best-of R(r*) ≤ ε_task (audited) on every task; "
        f"{pretty_estimator(v3['estimator'])}(learned) = r* on ≥ "
        f"{c['min_exact_rate_recovery']:.0%}; r_emp = r* on ≥ {c['min_knee_rate']:.0%} of tasks"
    )


@claim("C7", STATEMENT, ("train_metrics", "bounds"), _t_c7_v3, registration="v3")
def claim_c7_v3(tables: Mapping, v3: dict, run: dict | None) -> list[Check]:
    """L3 and L4 with the QK kernel: deficiency as a magnitude against the Eckart–Young tail,
    achievability and the knee from the best of seeds × restarts at the audited ε_task, recovery
    counted in tasks; each rung on its registered tasks (docs/method.md §5c)."""
    from entropic_bound.claims import checks_v3, theory_v3

    c = v3["C7"]
    metrics, bounds = tables["train_metrics"], tables["bounds"]
    bad = theory_v3.needs_run(run, "C7 deficiency magnitude")
    if bad is not None:
        return [bad]
    tasks = theory_v3.registered_tasks(run, c["rungs"])
    protocol = {
        r: theory_v3.protocol_refusal(run, v3, f"C7 achievability ({r})") for r in c["rungs"]
    }
    checks = []
    for rung in c["rungs"]:
        checks.append(
            checks_v3.deficiency_v3(
                bounds, tasks, rung, v3, run, f"C7 deficiency magnitude ({rung})"
            )
        )
        if protocol[rung] is not None:
            checks.append(protocol[rung])
        else:
            checks.append(
                checks_v3.achievability_v3(
                    metrics, bounds, tasks, rung, v3, f"C7 achievability ({rung})"
                )
            )
            checks.append(
                checks_v3.knee_v3(
                    metrics, bounds, tasks, rung, v3, c["min_knee_rate"], f"C7 knee ({rung})"
                )
            )
        checks.append(
            checks_v3.recovery_v3(
                metrics, tasks, rung, v3, run, c["min_exact_rate_recovery"], f"C7 recovery ({rung})"
            )
        )
    return checks


CLAIM_V3 = claim_c7_v3
