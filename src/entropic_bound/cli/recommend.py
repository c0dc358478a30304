"""The recommended minimum query-key rank of a user's X, Y [B, n, d], before any training.

:func:`recommend_rank` runs every data-only predictor of docs/method.md §3 under every rank
estimator of §2 in one pass over the data (:mod:`.scan`), places the data on the predictability
frontier (n against d, a noise estimate, linear- or softmax-like mixing, :mod:`.placement`),
picks the predictor the paper's frontier trusts there and returns a :class:`Recommendation`:
rank, predictor, estimator, confidence, regime, why, notes, and the full report that
``entropic-bound predict --json`` prints.

    >>> rec = recommend_rank(X, Y)                      # X, Y: [B, n, d] arrays
    >>> rec.rank, rec.predictor, rec.confidence
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np
import torch

from entropic_bound.cli import scan
from entropic_bound.cli.npyio import ArraySource, InputError
from entropic_bound.cli.placement import mixing, noise, regime, softmax_kernel, static_residual
from entropic_bound.cli.scan import DEFAULT_ESTIMATOR, Settings, check_memory, make_plan, run_pass
from entropic_bound.cli.why import explain
from entropic_bound.core.estimators import all_estimators, estimate, estimator_names, round_rank
from entropic_bound.predict.base import log_inversion_spectrum
from entropic_bound.predict.inversion import predict_inversion
from entropic_bound.predict.static import predict_static


@dataclass(frozen=True)
class Thresholds:
    """Every threshold of the recommendation, with why (set once, from the ladder; never tuned
    on a user's data)."""

    #: static-fit share from which one static kernel explains the data: L0–L2 tasks sit at
    #: >= 0.995, L3 at ~0.93, L4 and the interpolation rungs lower (ladder at n, d <= 32)
    static_share: float = 0.99
    #: mean-token index from which the mixing looks softmax-like: L3 gave 0.93–1.04 (L0 < 0.5) at
    #: σ <= 0.1, softmax rungs 2.4–30 (L4 down to β = 8), over n in {8..128}, d in {16, 64}
    softmax_index: float = 1.5
    #: relative noise (σ over the signal's rms) up to which P_attn stays exact at n >= 2d (C9)
    noise_at_scale: float = 0.1
    #: a P_attn spectrum whose largest ‖Z_b‖² exceeds this many times the mean is dominated by a
    #: few ill-conditioned sequences: over L3/L4 at n in [d, 2d] max/mean stayed <= 25 wherever
    #: P_attn was right and reached 100–4000 where a few sequences' noise dominated
    dominance: float = 50.0
    #: P_static's M̂ reads as a row-softmax when at least this share of its entries is positive
    #: (a linear kernel U diag(s) Wᵀ has mixed signs) ...
    softmax_positive: float = 0.95
    #: ... and its row sums spread by at most this fraction of their mean (softmax rows sum to 1)
    softmax_row_spread: float = 0.05


THRESHOLDS = Thresholds()
#: the parts of a task file's meta shown beside the prediction, for comparison only
TASK_META_KEYS = (
    "task_id",
    "rung",
    "family",
    "r_star",
    "n",
    "d",
    "beta",
    "sigma",
    "value_map",
    "lambda",
    "seed",
)


@dataclass
class Recommendation:
    """The recommended minimum QK rank, the predictor trusted for it, and why."""

    rank: int
    predictor: str
    estimator: str
    confidence: str
    regime: str
    why: str
    notes: list[str] = field(default_factory=list)
    report: dict = field(default_factory=dict, repr=False)  # everything, as `predict --json`


def check_estimator(name: str) -> None:
    if not (name.startswith("energy_") or name in estimator_names()):
        raise InputError(
            f"--estimator {name!r}: unknown estimator",
            f"choose one of {', '.join(estimator_names())} (or energy_<tau>)",
        )
    try:
        estimate(np.ones(1), name)  # a bad energy_<tau> fails here, before any work
    except ValueError as exc:
        raise InputError(
            f"--estimator {name!r} is not usable ({exc})",
            "give energy_<tau> with 0 < tau <= 1, e.g. energy_0.99",
        ) from None


def validate_shapes(X, Y) -> tuple[int, int, int]:
    """B, n, d of two array sources, or the reason they cannot be predicted from."""
    for ref in (X, Y):
        ref.check()
        if not ref.numeric:
            raise InputError(
                f"{ref.where()} has dtype {ref.dtype}, not real numbers",
                "save X and Y as float32 or float64 arrays",
            )
    for ref in (X, Y):
        if len(ref.shape) != 3:
            raise InputError(
                f"{ref.where()} has {len(ref.shape)} dimensions (shape {ref.shape}), expected 3: "
                "[B sequences, n tokens, d dimensions]",
                "reshape it to [B, n, d] (one sequence is [1, n, d])",
            )
    if X.shape != Y.shape:
        raise InputError(
            f"X has shape {X.shape} but Y has shape {Y.shape}",
            "Y must hold one d-dimensional target per token: the same [B, n, d] as X",
        )
    B, n, d = X.shape
    if B == 0 or d == 0:
        raise InputError(
            f"X and Y have shape {X.shape}: no {'sequences' if B == 0 else 'dimensions'}",
            "give at least one sequence of tokens with d >= 1",
        )
    if n < 2:
        raise InputError(
            f"sequences have n = {n} token; attention mixes tokens, so every predictor needs n >= 2",
            "give sequences of at least 2 tokens",
        )
    return B, n, d


def _estimates(spectrum: np.ndarray, estimator: str) -> dict[str, float]:
    est = {k: float(v) for k, v in all_estimators(spectrum).items()}
    if estimator not in est:
        est[estimator] = float(estimate(spectrum, estimator))
    return est


def _ok(spec: np.ndarray, used: int, kind: str, estimator: str, **extra) -> dict:
    return {
        "status": "ok",
        "sequences_used": used,
        **extra,
        "spectrum_kind": kind,
        "spectrum": spec.tolist(),
        "estimates": _estimates(spec, estimator),
    }


def recommend_source(
    X,
    Y,
    settings: Settings | None = None,
    *,
    source: str = "X, Y",
    meta: dict | None = None,
    progress=None,
    memory: int | None = -1,
    th: Thresholds = THRESHOLDS,
) -> Recommendation:
    """:func:`recommend_rank` on array sources (:class:`.npyio.ArrayRef` or ``ArraySource``).
    ``memory``: bytes available (-1: ask the machine; None: do not check)."""
    settings = settings or Settings()
    settings.check()
    check_estimator(settings.estimator)
    B, n, d = validate_shapes(X, Y)
    plan = make_plan(settings, B, n, d)
    check_memory(plan, scan.available_memory() if memory == -1 else memory)
    acc, static_data, invert_data = run_pass(X, Y, plan, progress)
    est, notes = settings.estimator, []
    mix = mixing(acc, th)

    attn_spec = acc.spectrum()[0].numpy()
    kind = "sqrt(eig(sum_b Z_b Z_b^T)), Z_b = pinv(" + ("J X_b" if n > d else "X_b") + ") Y_b"
    preds = {"P_attn": _ok(attn_spec, plan.n_attn, kind, est, centred=n > d)}
    if plan.n_attn < B:
        notes.append(
            f"P_attn and the diagnostics used a seeded subsample (seed {settings.seed}) of "
            f"{plan.n_attn} of {B} sequences (--attn-max-sequences; 0 uses all)"
        )
    if static_data is not None:
        try:
            st = predict_static(*static_data)
        except ValueError as exc:
            raise InputError(str(exc), "or pass --no-static to skip P_static") from None
        soft = softmax_kernel(st["M_hat"], th)
        spec = (
            log_inversion_spectrum(torch.as_tensor(st["M_hat"])).numpy()
            if soft
            else np.asarray(st["spectrum"])
        )
        kind = (
            "log-inversion of M_hat (positive, equal row sums: a softmax)" if soft else "svd(M_hat)"
        )
        preds["P_static"] = _ok(
            spec,
            plan.n_static,
            kind,
            est,
            static_fit_share=float(st["static_fit_share"]),
            softmax_kernel=soft,
        )
        if plan.n_static < B:
            notes.append(
                f"P_static used a seeded subsample of {plan.n_static} of {B} sequences "
                f"({settings.static_oversample} × n·d; --static-oversample)"
            )
    else:
        preds["P_static"] = {"status": plan.static_skip, "static_fit_share": None}
    if invert_data is not None:
        try:
            spec = np.asarray(predict_inversion(*invert_data)["spectrum"])
        except ValueError as exc:
            raise InputError(str(exc), "or drop --value-known") from None
        preds["P_invert"] = _ok(spec, plan.n_invert, "svd(A_hat), log-inversion with V = I", est)
        if plan.n_invert < B:
            notes.append(
                f"P_invert used a seeded subsample of {plan.n_invert} of {B} sequences "
                "(--invert-max-sequences)"
            )
    else:
        preds["P_invert"] = {"status": plan.invert_skip}

    name, case = choose_predictor(n, d, preds, mix, settings.value_known, th)
    if name == "P_static":  # a static kernel shows its form directly; the token diagnostic need not
        mix["label"] = "softmax-like" if preds["P_static"]["softmax_kernel"] else "linear-like"
        mix["basis"] = "P_static's kernel M̂ (softmax: positive with equal row sums)"
    attn_cut = int(round_rank(preds["P_attn"]["estimates"][est]))
    resid = static_residual(*static_data) if name == "P_static" else None
    noise_est = noise(acc, attn_spec, attn_cut, name, mix["label"] == "softmax-like", resid)
    conditioning = acc.conditioning(th.dominance)
    value = preds[name]["estimates"][est]
    rec = {
        "min_qk_rank": int(round_rank(value)),
        "value": value,
        "predictor": name,
        "estimator": est,
    }
    rec.update(explain(n, d, preds, name, case, noise_est, conditioning, est, th))
    chosen = np.asarray(preds[name]["spectrum"])
    total = float(np.sum(chosen**2))
    rec["tail_energy"] = (
        float(np.sum(chosen[rec["min_qk_rank"] :] ** 2)) / total if total > 0 else 0.0
    )

    xbar_rms = float(torch.linalg.vector_norm(acc.xbar / acc.seen)) / math.sqrt(d)
    x_rms = math.sqrt(acc.x2 / (acc.seen * n * d))
    if x_rms > 0 and xbar_rms > 0.1 * x_rms:
        notes.append(
            f"the tokens have a nonzero average (mean token rms {xbar_rms:.3g} vs token rms "
            f"{x_rms:.3g}); the predictors and the mixing diagnostic assume roughly centred inputs"
        )
    if name != "P_static" and preds["P_static"].get("static_fit_share") is not None:
        notes.append(
            f"P_static is not trusted: its static-fit share is below {th.static_share}, so the "
            "mixing depends on the input (query-key attention)"
        )
    where = regime(n, d, th)
    report = {
        "input": {
            "source": source,
            "B": B,
            "n": n,
            "d": d,
            "dtype": [str(X.dtype), str(Y.dtype)],
            "task_meta": {k: meta[k] for k in TASK_META_KEYS if k in meta} if meta else None,
        },
        "settings": {k: v for k, v in asdict(settings).items()},
        "predictors": preds,
        "static_fit_share": preds["P_static"].get("static_fit_share"),
        "frontier": {
            "n": n,
            "d": d,
            "regime": where,
            "noise": noise_est,
            "mixing": mix,
            "conditioning": conditioning,
        },
        "recommendation": rec,
        "notes": notes,
    }
    return Recommendation(
        rec["min_qk_rank"], name, est, rec["confidence"], where, rec["why"], notes, report
    )


def choose_predictor(
    n: int, d: int, preds: dict, mix: dict, value_known: bool, th: Thresholds = THRESHOLDS
) -> tuple[str, str]:
    """(trusted predictor, case) by the paper's frontier (docs/method.md §3, claim C9)."""
    label = mix["label"]
    share = preds["P_static"].get("static_fit_share")
    if share is not None and share >= th.static_share:
        return "P_static", "static"
    if label == "softmax-like" and value_known and n <= d and "spectrum" in preds["P_invert"]:
        return "P_invert", "invert"
    if label == "undetermined":
        return "P_attn", "undetermined"
    if label == "softmax-like":
        return "P_attn", "softmax" if n > d else "softmax_short"
    return "P_attn", "linear" if n >= d else "linear_short"


def recommend_rank(X, Y, *, progress=None, **options) -> Recommendation:
    """The recommended minimum QK rank of X, Y: [B, n, d] arrays (numpy or torch).

    ``options`` are the fields of :class:`.scan.Settings` (``estimator``, ``value_known``,
    ``seed``, ``attn_max_sequences``, ``no_static``, ``static_max_size``, ``static_oversample``,
    ``invert_max_sequences``). Bad input raises :class:`.npyio.InputError` (a ValueError).
    """
    if torch.is_tensor(X):
        X = X.detach().cpu().numpy()
    if torch.is_tensor(Y):
        Y = Y.detach().cpu().numpy()
    settings = Settings(**options)
    return recommend_source(ArraySource(X, "X"), ArraySource(Y, "Y"), settings, progress=progress)


__all__ = ["DEFAULT_ESTIMATOR", "Recommendation", "Settings", "recommend_rank", "recommend_source"]
