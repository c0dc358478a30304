"""The claims' thresholds (config/claims.yaml) against themselves and against a run's config:
rung and estimator names, the estimators a run computes, registration v2's cross-keys."""

from __future__ import annotations

import math

from entropic_bound.config.relations import ConfigError
from entropic_bound.core.rungs import parse_rung


def check_claims_relations(claims: dict) -> None:
    """Every rung a claim names is a rung name (a typo would make the claim 'missing input')."""
    lists = [("C5", "rungs"), ("C6", "static_rungs"), ("C6", "attention_rungs"), ("C7", "rungs")]
    for claim, key in lists:
        for i, rung in enumerate(claims[claim][key]):
            _check_rung(rung, f"{claim}.{key}[{i}]")
    _check_rung(claims["C8"]["rung"], "C8.rung")
    # C8 computes its estimators on learned spectra itself (any τ), so they need only be
    # estimators: energy_<τ> with 0 < τ ≤ 1, spelled as the tables spell it
    for key, name in [("estimator", claims["estimator"])] + [
        (f"C8.estimators[{i}]", e) for i, e in enumerate(claims["C8"]["estimators"])
    ]:
        _check_estimator(name, key)
    v2 = claims["v2"]
    for claim, key in (
        ("C5", "rungs"),
        ("C6", "static_rungs"),
        ("C6", "attention_rungs"),
        ("C7", "rungs"),
    ):
        for i, rung in enumerate(v2[claim][key]):
            _check_rung(rung, f"v2.{claim}.{key}[{i}]")
    for key, name in [
        ("v2.estimator", v2["estimator"]),
        ("v2.C9.estimator", v2["C9"]["estimator"]),
    ] + [(f"v2.C8.estimators[{i}]", e) for i, e in enumerate(v2["C8"]["estimators"])]:
        _check_estimator(name, key)


def _check_estimator(name: str, key: str) -> None:
    from entropic_bound.core.estimators import energy_name, energy_tau, estimator_names

    try:
        tau = energy_tau(name)
    except ValueError:
        tau = math.nan
    if tau is not None and not (0 < tau <= 1 and energy_name(tau) == name):
        raise ConfigError(
            f"claims key '{key}': {name!r} is not an estimator; energy_<τ> needs 0 < τ ≤ 1 "
            f"written as energy_0.99 ({', '.join(estimator_names(()))} need no τ)"
        )


def _check_rung(rung: str, key: str) -> None:
    try:
        parse_rung(rung)
    except ValueError as exc:
        raise ConfigError(f"claims key '{key}': {exc}") from None


def check_claims_estimators(cfg: dict, claims: dict) -> None:
    """The claims estimator is one the run's tables hold: numerical, stable, entropy,
    participation or energy_<τ> for a τ of ``predict.taus``, spelled as the tables spell it
    (``energy_0.5`` with taus [0.9, 0.99], or ``energy_00.99``, passed the schema and left
    every claim that reads it without rows, after the whole run)."""
    from entropic_bound.core.estimators import estimator_names

    computed = estimator_names(cfg["predict"]["taus"])
    v2 = claims["v2"]
    for key, name in (
        ("estimator", claims["estimator"]),
        ("v2.estimator", v2["estimator"]),
        ("v2.C9.estimator", v2["C9"]["estimator"]),
        *((f"v2.C8.estimators[{i}]", e) for i, e in enumerate(v2["C8"]["estimators"])),
    ):
        if name not in computed:
            raise ConfigError(
                f"claims key {key!r} and config key 'predict.taus': {name!r} is not an "
                f"estimator this run computes ({', '.join(computed)}); name one of them, or "
                "add its τ to predict.taus"
            )
    # training retires students and searches knees at ε_task ≤ train.epsilon, which must not
    # ask less than the claims' ε (a student retired above ε could never meet the claims)
    for key, eps in (("epsilon", claims["epsilon"]), ("v2.epsilon", v2["epsilon"])):
        if cfg["train"]["epsilon"] > eps:
            raise ConfigError(
                f"config key 'train.epsilon' ({cfg['train']['epsilon']:g}) is above claims key "
                f"{key!r} ({eps:g}): students would retire before reaching the claims' target; "
                "set train.epsilon ≤ it"
            )
    for i, rung in enumerate(v2["C7"]["rungs"]):  # C7 v2 tests the deficiency of these rungs
        if rung not in cfg["bounds"]["deficiency_rungs"]:
            raise ConfigError(
                f"claims key 'v2.C7.rungs[{i}]' ({rung}) is not in config key "
                "'bounds.deficiency_rungs': its class bounds below r* would not be computed; add it"
            )
