"""What each of registration v4's sub-claims reads (docs/method.md §5d): one function per
``select:`` name of config/claims.yaml, from the cached tables and the run's config to the
per-unit outcomes (True, False or NaN: unknown) or the per-estimator scores a primitive decides.

A selector expects the units the run's config registers, not the rows the tables happen to
hold: a registered unit without a row is NaN (unknown), and so is one that a join could not
match; it never drops a unit silently. Each returns a :class:`Selected`, or a :class:`Check`
when the sub-claim cannot be posed at all on this run (ill-posed, the run's config absent).
"""

from __future__ import annotations

from collections.abc import Callable

from entropic_bound.claims.v4.base import Selected  # noqa: F401  re-exported
from entropic_bound.claims.v4.distortion import (
    distortion_exact,
    distortion_rate,
    distortion_shift,
)
from entropic_bound.claims.v4.frontier import (
    identifiability,
    linear_at_scale,
    linear_clean,
    nonlinear_inversion,
    softmax_partial,
)
from entropic_bound.claims.v4.trained import (
    achievability,
    deficiency,
    knee,
    ladder,
    p_static_exact,
    recovery,
    static_match,
    static_student_risk_floor,
)
from entropic_bound.claims.verdict import Check

# ---------------------------------------------------------------- the frozen v3 readings


def claim_v3(cid: str):
    """Registration v3's claim ``cid``, from its own module (c1.py … c9.py), as registered."""
    import importlib

    return importlib.import_module(f"entropic_bound.claims.{cid.lower()}").CLAIM_V3


def v3_checks(tables, run, claims, inputs) -> list[Check]:
    """Registration v3's checks of a claim, run as registered (for a line beyond the
    abstract): the whole claim, or the one check ``inputs['check']`` names."""
    row_checks = claim_v3(inputs["claim"]).evaluate(tables, claims, run)
    if "check" in inputs:
        row_checks = [c for c in row_checks if c.name == inputs["check"]] or [
            Check(None, f"v3 has no check named {inputs['check']!r} on this run")
        ]
    return row_checks


#: select name -> the cached tables it reads (a planted control re-evaluates a line only when
#: one of them changed)
NEEDS: dict[str, tuple[str, ...]] = {
    "deficiency": ("bounds",),
    "achievability": ("train_metrics", "bounds"),
    "knee": ("train_metrics", "bounds"),
    "recovery": ("train_metrics",),
    "p_static_exact": ("data_only_predictions",),
    "static_student_risk": ("train_metrics",),
    "static_match": ("data_only_predictions", "train_metrics", "bounds"),
    "ladder": ("data_only_predictions", "train_metrics"),
    "distortion_exact": ("C8_distortion",),
    "distortion_rate": ("C8_distortion",),
    "distortion_shift": ("C8_distortion",),
    "linear_clean": ("frontier",),
    "linear_at_scale": ("frontier",),
    "softmax_partial": ("frontier",),
    "nonlinear_inversion": ("X1_teachers",),
    "identifiability": ("X1_boundaries",),
}

#: select name -> function(tables, run, v4 settings, inputs)
SELECTORS: dict[str, Callable] = {
    "deficiency": deficiency,
    "achievability": achievability,
    "knee": knee,
    "recovery": recovery,
    "p_static_exact": p_static_exact,
    "static_student_risk": static_student_risk_floor,
    "static_match": static_match,
    "ladder": ladder,
    "distortion_exact": distortion_exact,
    "distortion_rate": distortion_rate,
    "distortion_shift": distortion_shift,
    "linear_clean": linear_clean,
    "linear_at_scale": linear_at_scale,
    "softmax_partial": softmax_partial,
    "nonlinear_inversion": nonlinear_inversion,
    "identifiability": identifiability,
}
