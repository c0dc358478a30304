"""Controls: every check of every registration run on planted inputs (docs/method.md §5c).

A check counts only if it could have failed. The planted world (:mod:`.planted`, 12 tasks a
rung, its bounds, X1 boundaries and the run config it stands for) is one where every claim is
true; each switch of :data:`SWITCHES` makes it false in one way a check exists to catch. For
every check of v1, v2 and v3 the table records whether it passes on the true world and which
planted-false inputs make it fail. A check that no planted-false input fails is either a
*validation* (v3 marks those that are theorems: reported, no verdict weight) or, for v1 and v2,
"not shown able to fail": the table says so rather than hiding it.

Checks are identified by name (v3) or by their position and the words before their first ':'
(v1 and v2, whose checks were not named when they were registered).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pandas as pd

from entropic_bound.analysis.memo import table_memo
from entropic_bound.claims.planted import (
    ALL_RUNGS,
    fabricate,
    tail_energy,
    teacher_spectrum,
)
from entropic_bound.claims.v4.planted import (
    SWITCHES_V4,
    identifiable,
    planted_distortion,
    planted_x1_teachers,
)

#: task seeds of the planted world: 4 × r* ∈ {1, 2, 4} = 12 tasks a rung (≥ min_tasks)
SEEDS = (0, 1, 2, 3)
#: planted-false inputs: switch -> what it plants (planted.py implements each)
SWITCHES = {
    "C1": "L0 students below r* at 0.2× the Eckart–Young tail",
    "C1_nan": "a diverged L0 student below r* (NaN R)",
    "C2": "every L0 student stuck at r* (R = 0.05)",
    "C3": "learned L0 kernels keep 15 % of their energy beyond r*",
    "C4": "P_static one too high on one clean L0 task",
    "C4_noisy": "P_static one too high on every noisy L0 copy",
    "C5": "P_static right on L3 and the static students near zero on L3, L4",
    "C5_match": "P_static right on L3 and L4",
    "C5_static": "static students near zero on L3 and L4",
    "C5_absent": "one registered L4 task never trained",
    "C6": "static-fit share rising and static-student R falling along λ",
    "C6_static": "P_static one too high on L1",
    "C6_static@L2": "P_static one too high on L2 (the rank-constrained static rung)",
    "C6_attention": "P_static right on L4",
    "C6_share": "static-fit share rising along λ",
    "C6_risk": "static-student R falling along λ",
    "C6_nan": "NaN static students on one λ-rung task",
    "C7": "every L4 student stuck at r*",
    "C7_deficiency@L3": "L3 students below r* at 0.2× the tail",
    "C7_deficiency@L4": "L4 students below r* at 0.2× the tail",
    "C7_achieve@L3": "every L3 student stuck at r*",
    "C7_achieve@L4": "every L4 student stuck at r*",
    "C7_recovery@L3": "learned L3 kernels keep 15 % beyond r*",
    "C7_tiny@L3": "L3 students below r* at R = 5e-3 (below 10ε and the tail)",
    "C7_tiny@L4": "L4 students below r* at R = 5e-3 (below 10ε and the tail)",
    "C7_recovery@L4": "learned L4 kernels keep 15 % beyond r*",
    "C8": "learned L4 kernels keep 15 % beyond r*",
    "C8_list": "r_E(0.99) one too high on one learned L4 kernel",
    "C8_nan": "a NaN learned L4 spectrum",
    "C8_v3_accuracy": "r_E(0.99) errs by 3 on distorted L4 cells",
    "C8_v3_robust": "the stable rank errs by 3 more on L3 than on L4",
    "C9": "L3 P_attn inexact at the largest σ at scale",
    "C9_noisy": "L3 P_attn inexact at every σ > 0",
    "C9_invert_robust": "P_invert exact at every σ (β ≤ 2): inversion not noise-sensitive",
    "C9_full": "softmax fully recoverable: L4 P_attn exact everywhere",
    "C9_flat_beta": "L4 P_attn exactness independent of β",
    "C9_nonlinear": "P_invert as noise tolerant as its linear twin",
}
SWITCHES.update(SWITCHES_V4)  # registration v4's own tables (claims/v4/planted.py)
#: checks that are theorems or certainties (docs/method.md §5c): no claim-false world fails them.
#: v3 counts them as validations; v1 and v2 were registered counting them and are never edited, so
#: the table labels theirs (matched by the words before the check's first ':') without reweighting
VALIDATIONS_V1_V2 = {
    ("v1", "C9", "L3 σ = 0"): "theorem: col(C) = col(A) for linear attention (n ≥ d)",
    ("v1", "C9", "P_invert σ = 0"): "theorem: P̂ = Y V⁻¹ X⁺ is exact without noise at n ≤ d",
    ("v2", "C9", "P_invert σ = 0, n < d"): "theorem: P̂ = Y V⁻¹ X⁺ is exact without noise",
    ("v2", "C9", "P_invert assuming V = I on value-unknown data"): "certainty: Haar V ≠ I",
}
VALIDATIONS = {
    "C9 P_invert exact at σ = 0 (n ≤ d)": "theorem: P̂ = Y V⁻¹ X⁺ is exact without noise at n ≤ d",
    "C9 L3 P_attn exact at σ = 0 (n > d)": "theorem: col(C) = col(A) for linear attention",
    "C9 identifiability (V = I)": "certainty: a Haar value map is almost surely not I",
}
COLUMNS = ["registration", "claim", "check", "role", "true_passes", "fails_on", "false_fails"]


def planted_run() -> dict:
    """The run config the planted world stands for (d = n = 8, r* ∈ {1, 2, 4}, 4 task seeds)."""
    return {
        "seed": 0,
        "task": {
            "n": 8,
            "d": 8,
            "gain": 1.0,
            "kappa": 2.0,
            "beta": 1.0,
            "sigma": 0.0,
            "value_map": "unknown",
            "n_train": 4096,
            "n_test": 2048,
            "r_star": [1, 2, 4],
            "seeds": list(SEEDS),
            "rungs": ["L0", "L1", "L2", "L3", "L4"],
            "lambdas": [0.25, 0.5, 0.75],
        },
        "bounds": {"ranks": "all", "deficiency_rungs": ["L0", "L3", "L4"]},
        "train": {"classes": {"default": {"restarts": 1}}},
        "frontier": {"r_star": [1, 2, 4], "kappa": 2.0, "gain": 1.0, "seeds": list(SEEDS)},
    }


def planted_bounds(metrics: pd.DataFrame) -> pd.DataFrame:
    """bounds.csv of the planted world: v2's route at the tail energy, the students' route (the
    least R over seeds at each rank), R_best the least finite route, as the bounds stage does."""
    own = metrics[~metrics["static_student"].astype(bool)]
    students = own.groupby(["task_id", "rank"])["R"].min()
    tasks = metrics[["task_id", "rung", "r_star", "task_seed"]].drop_duplicates()
    rows = []
    for t in tasks.to_dict("records"):
        for r in range(1, t["r_star"]):
            tail = tail_energy(teacher_spectrum(t["r_star"]), r)
            routes = {"R_bound": tail, "R_students": students.get((t["task_id"], r), np.nan)}
            finite = {k: v for k, v in routes.items() if np.isfinite(v)}
            best = min(finite, key=finite.get)
            rows.append(
                {**t, "rank": r, **routes, "R_best": finite[best], "best_route": best}
                | {"spread": max(finite.values()) / finite[best], "n_routes": len(finite)}
            )
    return pd.DataFrame(rows).assign(grad_norm=0.0, iterations=0, method="planted")


def planted_x1(broken=()) -> pd.DataFrame:
    """X1_boundaries of the planted world: P_invert's σ₅₀/std below its linear twin's on every
    cell with n ≤ d (``C9_nonlinear``: above), P_invert assuming V = I never exact."""
    rows = []
    for n in (2, 4, 8):  # n < d on 12 cells (v2 judges n < d), n ≤ d on 18 (v3)
        for beta in (0.25, 1.0, 2.0):
            for n_seqs in (64, 512):
                cell = {"class": "L4", "n": n, "d": 8, "beta": beta, "n_seqs": n_seqs}
                inv = 0.2 if "C9_nonlinear" in broken else 0.01
                for pred, rel, vm, rate in (
                    ("P_invert", inv, "known", 1.0),
                    ("P_invert_linear", 0.1, "known", 1.0),
                    ("P_invert_V=I", 0.0, "unknown", 0.0),
                ):
                    rows.append(
                        {"predictor": pred, "value_map": vm, **cell}
                        | {"frontier_budget": n_seqs == 512, "n_cases": 12, "clean_std": 1.0}
                        | {"rate_clean": rate, "sigma50": rel, "sigma95": rel / 2}
                        | {"sigma50_rel": rel, "sigma95_rel": rel / 2, "n_evals": 10}
                    )
    return pd.DataFrame(rows)


@lru_cache(maxsize=64)
def _world(broken: frozenset) -> dict:
    # 4 frontier seeds too: 12 independent teachers (value map unknown × r* × seed) for v3
    tables = fabricate(broken=broken, rungs=ALL_RUNGS, task_seeds=SEEDS, frontier_seeds=SEEDS)
    tables["bounds"] = planted_bounds(tables["train_metrics"])
    tables["X1_boundaries"] = identifiable(planted_x1(broken), broken)
    tables["C8_distortion"] = planted_distortion((1, 2, 4), SEEDS, 8, broken)
    tables["X1_teachers"] = planted_x1_teachers((1, 2, 4), SEEDS, 8, broken)
    return tables


def planted_world(broken=()) -> dict[str, pd.DataFrame]:
    """Every table a claim reads, of the planted world with the switches ``broken``."""
    return dict(_world(frozenset(broken)))


def _label(check) -> str:
    """A check's row label: its v3 name, else its words before the first ':' (v1, v2)."""
    return check.name or check.measured.split(":")[0][:60]


def check_outcomes(claims: dict, broken=(), only=None) -> dict[tuple[str, str], list]:
    """(registration, claim) -> [(label, passed, v4 role), …] of every check (of the claims that read a
    table named in ``only``, when given), on the planted world with ``broken`` (an error inside
    a claim is its one missing-input check: :meth:`Claim.evaluate` isolates every claim)."""
    from entropic_bound.claims.registry import REGISTRY

    tables, run = planted_world(broken), planted_run()
    out = {}
    for reg, claims_of in REGISTRY.items():
        for cid, claim in claims_of.items():
            if only is not None and not set(claim.reads(claims)) & set(only):
                continue
            checks = claim.evaluate(tables, claims, run)
            out[(reg, cid)] = [(_label(c), c.passed, c.role) for c in checks]
    return out


def controls_table(claims: dict) -> pd.DataFrame:
    """One row per check of every registration: passes on the true world, the planted inputs
    that make it fail, and its role (check, validation, or not shown able to fail). Checks are
    matched by position within their claim (when a world gives the claim as many checks)."""
    with table_memo():  # each world's tables are asked the same questions by many claims
        return _controls_table(claims)


def _controls_table(claims: dict) -> pd.DataFrame:
    truth = check_outcomes(claims)
    fails = {key: [[] for _ in checks] for key, checks in truth.items()}
    true_world = planted_world()
    for switch in SWITCHES:
        # only the claims that read a table the switch changed can change (speed: ~10×)
        world = planted_world({switch})
        changed = [k for k, t in world.items() if not t.equals(true_world[k])]
        for key, checks in check_outcomes(claims, {switch}, only=changed).items():
            if key in truth and len(checks) == len(truth[key]):
                for i, (_, passed, _role) in enumerate(checks):
                    if passed is False:
                        fails[key][i].append(switch)
    rows = []
    for (reg, cid), checks in truth.items():
        for i, (label, passed, v4_role) in enumerate(checks):
            shown = bool(fails[(reg, cid)][i])
            theorem = _theorem(reg, cid, label)
            if v4_role in ("validation", "beyond"):  # v4 declares each line's role
                role = "validation" if v4_role == "validation" else "beyond the abstract"
            elif theorem is not None:
                role = "validation"
            else:
                role = "check" if shown else "not shown able to fail"
            rows.append(
                {
                    "registration": reg,
                    "claim": cid,
                    "check": label if reg in ("v3", "v4") else f"#{i + 1} {label}",
                    "role": role,
                    "true_passes": passed is True,
                    "fails_on": ", ".join(fails[(reg, cid)][i]),
                    "false_fails": shown,
                }
            )
    return pd.DataFrame(rows, columns=COLUMNS)


def _theorem(reg: str, cid: str, label: str) -> str | None:
    """Why a check is a validation (a theorem or a certainty), or None."""
    if reg == "v3":
        return VALIDATIONS.get(label)
    if (reg, cid, label) in VALIDATIONS_V1_V2:
        return VALIDATIONS_V1_V2[(reg, cid, label)]
    # v2's per-n exactness lines at σ = 0: "L3 P_attn n = 32, σ = 0"
    if (
        reg == "v2"
        and cid == "C9"
        and label.startswith("L3 P_attn n = ")
        and label.endswith("σ = 0")
    ):
        return "theorem: col(C) = col(A) for linear attention (n > d)"
    return None


def controls_markdown(controls: pd.DataFrame) -> list[str]:
    """claims.md's controls section: check, true → pass, false → fail (which planted input)."""
    counted = controls[~controls["role"].isin(["validation", "beyond the abstract"])]
    good = counted["true_passes"] & counted["false_fails"]
    lines = [
        "## Controls: every check on a planted true and a planted false input",
        "",
        f"{int(good.sum())}/{len(counted)} checks pass on the planted true world and fail on a "
        "planted false one; validations (theorems) carry no verdict weight under v3 (v1 and v2 "
        "count them as they were registered); a check no planted input fails is listed as such "
        "(docs/method.md §5c). Planted inputs: `src/entropic_bound/claims/planted.py`.",
        "",
        "| registration | claim | check | role | true → pass | false → fail (planted input) |",
        "|---|---|---|---|---|---|",
    ]
    for r in controls.itertuples(index=False):
        label = r.check if r.registration in ("v3", "v4") else r.check.split(" ", 1)[1]
        why = _theorem(r.registration, r.claim, label)
        if r.registration == "v4" and r.role == "validation":
            why = "a theorem of the setting (config/claims.yaml v4: role validation)"
        false = r.fails_on or ("none exists: " + why if why else "none")
        lines.append(
            f"| {r.registration} | {r.claim} | {r.check.replace('|', '/')} | {r.role} | "
            f"{'yes' if r.true_passes else '**no**'} | {false} |"
        )
    return lines + [""]
