"""The rules that tie a pipeline config's keys together (pass 4 of :mod:`.load`): what would
otherwise pass a dry run and fail inside a job, or run and mislead. Each error is one line that
names every key involved."""

from __future__ import annotations

from entropic_bound.core.rungs import STATIC_RUNGS, kernel_dim, rung_name


class ConfigError(ValueError):
    """A config that cannot run as meant; the message (one line) names the key(s)."""


def _keys(*keys: str) -> str:
    """``'a' and 'b'``, ``'a', 'b' and 'c'``."""
    quoted = [f"'{k}'" for k in keys]
    return ", ".join(quoted[:-1]) + " and " + quoted[-1]


#: the scale study's directory under results/ (workflow/rules/scale.smk)
SCALE_RUN_NAME = "scale"
#: names under results/ that are not a run's: the scale study's and the file explaining results/
RESERVED_RUN_NAMES = (SCALE_RUN_NAME, "README.md")


def check_relations(cfg: dict) -> None:
    """Rules between keys of a schema-valid pipeline config; each error names every key.

    The steps run in this order (the first broken rule is the one reported)."""
    _check_run_name(cfg)
    _check_kernel_sizes(cfg)
    _check_data_sizes(cfg)
    _check_devices(cfg)
    _check_boundaries_grid(cfg)
    _check_floor_aware(cfg)
    _check_products(cfg)


def _check_run_name(cfg: dict) -> None:
    if cfg["run_name"] in RESERVED_RUN_NAMES:
        raise ConfigError(
            f"config key 'run_name': results/{cfg['run_name']} is not a run's directory "
            f"({', '.join(RESERVED_RUN_NAMES)} are taken); choose another name"
        )


def _check_kernel_sizes(cfg: dict) -> None:
    """Every rung (Lλ ones by name) holds a teacher of the largest r*; the frontier's too."""
    t, f = cfg["task"], cfg["frontier"]
    n, d = t["n"], t["d"]
    # an Lλ rung is named after λ (rung_name gives λ back exactly, so distinct λ never share
    # a name); a λ that needs more digits than a name carries is refused
    lam_rungs = []
    for i, lam in enumerate(t["lambdas"]):
        try:
            lam_rungs.append(rung_name("Lam", lam))
        except ValueError as exc:
            raise ConfigError(f"config key 'task.lambdas[{i}]': {exc}") from None
    # a teacher kernel of rank r* needs r* ≤ its size: d for the query-key rungs (checked
    # first, the common case), n for the static rungs L0/L1
    r_max = max(t["r_star"])
    for rung in sorted([*t["rungs"], *lam_rungs], key=lambda r: r in STATIC_RUNGS):
        k = kernel_dim(rung, n, d)
        if r_max > k:
            size_key = "task.n" if rung in STATIC_RUNGS else "task.d"
            raise ConfigError(
                f"config keys {_keys('task.r_star', size_key)}: r* = {r_max} exceeds "
                f"{size_key.split('.')[1]} = {k}, the size of rung {rung}'s kernel; "
                f"use r* ≤ {k}"
            )
    if max(f["r_star"]) > f["d"]:
        raise ConfigError(
            f"config keys {_keys('frontier.r_star', 'frontier.d')}: r* = {max(f['r_star'])} "
            f"exceeds d = {f['d']}, the size of the d×d kernel; use r* ≤ {f['d']}"
        )


def _check_data_sizes(cfg: dict) -> None:
    """Enough sequences for P_static; noisy copies noisier than the tasks."""
    t = cfg["task"]
    n, d = t["n"], t["d"]
    # P_static is a least squares over vec(X) ∈ R^{nd}: it needs n·d training sequences
    if t["n_train"] < n * d:
        raise ConfigError(
            f"config keys {_keys('task.n_train', 'task.n', 'task.d')}: n_train = "
            f"{t['n_train']} < n·d = {n * d}, too few sequences for P_static; "
            f"use n_train ≥ {n * d}"
        )
    # a noisy copy adds noise to the task's own σ: it cannot be as clean or cleaner
    for i, s in enumerate(cfg["predict"]["noisy_sigmas"]):
        if s <= t["sigma"]:
            raise ConfigError(
                f"config keys {_keys(f'predict.noisy_sigmas[{i}]', 'task.sigma')}: a noisy "
                f"copy at σ = {s} is not noisier than the tasks (σ = {t['sigma']}); "
                f"use σ > {t['sigma']} or drop it"
            )


def _check_devices(cfg: dict) -> None:
    if cfg["device"] == "cuda" and cfg["train"].get("backend") == "fused":
        raise ConfigError(
            f"config keys {_keys('train.backend', 'device')}: the fused backend runs on the "
            "CPU only; use backend auto or torch with device cuda"
        )


def _check_boundaries_grid(cfg: dict) -> None:
    # the boundaries sweep bisects a log grid of σ from sigma_min up to sigma_max (the
    # boundaries job raised on an empty grid, after every other job had run)
    b = cfg["exploratory"]["boundaries"]
    if not b["sigma_min"] < b["sigma_max"]:
        raise ConfigError(
            f"config keys {_keys('exploratory.boundaries.sigma_min', 'exploratory.boundaries.sigma_max')}: "
            f"the σ grid runs from sigma_min = {b['sigma_min']} up to sigma_max = "
            f"{b['sigma_max']}; use sigma_min < sigma_max"
        )


def _check_products(cfg: dict) -> None:
    tr = cfg["train"]
    if tr.get("products") == "factored" and (
        tr.get("backend") == "torch" or cfg["device"] == "cuda"
    ):
        raise ConfigError(
            f"config keys {_keys('train.products', 'train.backend', 'device')}: products "
            "factored is a form of the fused CPU kernel; use products auto (or dense) with the "
            "torch backend or device cuda"
        )


def _check_floor_aware(cfg: dict) -> None:
    """X3's estimators are names of the one registry (core/estimators.py), opt-in ones included;
    its held-out seeds are not the frontier's own (they would not be held out)."""
    from entropic_bound.core.estimators import estimate, estimator_names

    fa = cfg["exploratory"]["floor_aware"]
    for i, name in enumerate(fa["estimators"]):
        try:
            estimate([1.0], name)
        except ValueError:
            raise ConfigError(
                f"config key 'exploratory.floor_aware.estimators[{i}]': {name!r} is not an "
                f"estimator; name one of {', '.join(estimator_names(opt_in=True))} (or "
                "energy_<τ>, 0 < τ ≤ 1)"
            ) from None
    shared = sorted(set(fa["seeds"]) & set(cfg["frontier"]["seeds"]))
    if shared:
        raise ConfigError(
            f"config keys {_keys('exploratory.floor_aware.seeds', 'frontier.seeds')}: seeds "
            f"{shared} are the frontier's own, so they are not held out; choose other seeds"
        )
