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


def registered_estimators(claims: dict) -> list[tuple[str, str]]:
    """(claims key, estimator) of every estimator a registration reads from the run's tables."""
    v2, v3 = claims["v2"], claims["v3"]
    return [
        ("estimator", claims["estimator"]),
        ("v2.estimator", v2["estimator"]),
        ("v2.C9.estimator", v2["C9"]["estimator"]),
        *((f"v2.C8.estimators[{i}]", e) for i, e in enumerate(v2["C8"]["estimators"])),
        ("v3.estimator", v3["estimator"]),
        ("v3.C8.estimator", v3["C8"]["estimator"]),
        ("v3.C9.estimator", v3["C9"]["estimator"]),
        *((f"v3.C8.competitors[{i}]", e) for i, e in enumerate(v3["C8"]["competitors"])),
    ]


def check_claims_estimators(cfg: dict, claims: dict) -> None:
    """Every estimator a registration reads is one the run computes: a config's
    ``predict.taus`` adds to what the registrations need and never removes it (docs/method.md
    §5c): a τ a registration names and the config lacks is appended to ``predict.taus`` (so a
    config written before a registration runs unchanged, its own estimators' rows as they
    were). An opt-in estimator (``floor``) must be one the frontier computes
    (``frontier.grid.OPT_IN``)."""
    from entropic_bound.core.estimators import energy_tau, estimator_names, is_opt_in
    from entropic_bound.core.tables import FRONTIER_OPT_IN as OPT_IN

    taus = cfg["predict"]["taus"]
    for key, name in registered_estimators(claims):
        tau = energy_tau(name)
        if tau is not None and name not in estimator_names(taus):
            taus.append(tau)
        if is_opt_in(name) and name not in OPT_IN:
            raise ConfigError(
                f"claims key {key!r}: {name!r} is an opt-in estimator the frontier does not "
                f"compute ({', '.join(OPT_IN) or 'none'})"
            )
    v2 = claims["v2"]
    # training retires students and searches knees at ε_task ≤ train.epsilon, which must not
    # ask less than the claims' ε (a student retired above ε could never meet the claims)
    for key, eps in (
        ("epsilon", claims["epsilon"]),
        ("v2.epsilon", v2["epsilon"]),
        ("v3.epsilon", claims["v3"]["epsilon"]),
    ):
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
