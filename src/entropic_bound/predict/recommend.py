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

from entropic_bound.core.estimators import estimate, estimator_names, round_rank
from entropic_bound.predict import scan
from entropic_bound.predict.causal_signals import HELD_OUT_KNEE
from entropic_bound.predict.confidence import assess
from entropic_bound.predict.entries import predictor_entries
from entropic_bound.predict.placement import mixing, noise, regime, static_residual
from entropic_bound.predict.scan import (
    AUTO_ESTIMATOR,
    DEFAULT_ESTIMATOR,
    Settings,
    check_memory,
    make_plan,
    run_pass,
)
from entropic_bound.predict.shapes import Shape, head_source, validate_shapes
from entropic_bound.predict.sources import ArraySource, InputError
from entropic_bound.predict.why import explain


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
#: whether the default estimator reads softmax-like P_attn spectra with the floor-aware rank:
#: set from X3 (docs/method.md §8) by the rule stated before it was run on the held-out seeds
FLOOR_FOR_SOFTMAX = True
#: the cases in which the default estimator is the floor-aware rank: softmax-like data read by
#: the centred P_attn at n > d, where X3's rule was decided (not n <= d, where both estimators
#: are mostly wrong and the floor-aware rank under-counts, nor the causal fit, which X3 does not
#: test)
SOFTMAX_CASES = ("softmax",)
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
    fit: object = field(default=None, repr=False)  # the causal fit (causal.CausalFit), or None


def check_estimator(name: str) -> None:
    if name == AUTO_ESTIMATOR:
        return
    if not (name.startswith("energy_") or name in estimator_names(opt_in=True)):
        raise InputError(
            f"--estimator {name!r}: unknown estimator",
            f"choose one of auto, {', '.join(estimator_names(opt_in=True))} (or energy_<tau>)",
        )
    try:
        estimate(np.ones(1), name)  # a bad energy_<tau> fails here, before any work
    except ValueError as exc:
        raise InputError(
            f"--estimator {name!r} is not usable ({exc})",
            "give energy_<tau> with 0 < tau <= 1, e.g. energy_0.99",
        ) from None


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
    """:func:`recommend_rank` on array sources (:class:`.npyio.ArrayRef` or ``ArraySource``) of
    one head: Y [B, n, d_v], or the head ``settings.head`` of Y [B, H, n, d_v].
    ``memory``: bytes available (-1: ask the machine; None: do not check)."""
    settings = settings or Settings()
    settings.check()
    check_estimator(settings.estimator)
    shape = validate_shapes(X, Y)
    if shape.heads is not None:
        Y = head_source(Y, shape, settings.head)
    plan = make_plan(settings, shape.B, shape.n, shape.d, shape.dv)
    check_memory(plan, scan.available_memory() if memory == -1 else memory)
    acc, gathered = run_pass(X, Y, plan, progress)
    mix = mixing(acc, th)
    notes: list[str] = []
    preds, fit = predictor_entries(acc, gathered, plan, mix, settings, notes, th)
    name, case = choose_predictor(shape.n, shape.d, preds, mix, settings.value_known, th)
    if settings.causal and name == "P_attn":
        case = "causal_" + ("softmax" if mix["label"] == "softmax-like" else "linear")
    if name == "P_static":  # a static kernel shows its form directly; the token diagnostic need not
        mix["label"] = "softmax-like" if preds["P_static"]["softmax_kernel"] else "linear-like"
        mix["basis"] = "P_static's kernel M̂ (softmax: positive with equal row sums)"
    est = chosen_estimator(settings.estimator, case, preds[name]["estimates"])
    attn_cut = int(round_rank(preds["P_attn"]["estimates"][est]))
    resid = static_residual(*gathered["static"]) if name == "P_static" else None
    attn_spec = np.asarray(preds["P_attn"]["spectrum"])
    noise_est = noise(
        acc, attn_spec, attn_cut, name, mix["label"] == "softmax-like", resid, causal=fit
    )
    conditioning = acc.conditioning(th.dominance)
    if settings.causal:  # the per-sequence sums do not make the causal spectrum
        conditioning.update(dominated=False, applies=False)
    rec = recommendation(preds, name, case, est, settings, shape, noise_est, conditioning, th)
    assess(rec, case, preds[name], mix, gathered["tally"], acc, settings.causal)
    rec["tail_energy"] = tail_energy(preds[name]["spectrum"], rec["min_qk_rank"])
    if plan.static_skip and "needs at least" in plan.static_skip:
        notes.append(f"P_static {plan.static_skip}; P_attn needs far fewer sequences")
    notes += general_notes(acc, shape, preds, name, th)
    report = build_report(X, Y, shape, settings, source, meta, preds, noise_est, mix)
    report["frontier"]["conditioning"] = conditioning
    report.update(recommendation=rec, notes=notes)
    return Recommendation(
        rec["min_qk_rank"],
        name,
        est,
        rec["confidence"],
        report["frontier"]["regime"],
        rec["why"],
        notes,
        report,
        fit,
    )


def chosen_estimator(asked: str, case: str, estimates: dict | None = None) -> str:
    """The estimator of the recommendation: the one asked for, except that the default
    (``auto``) reads softmax-like P_attn spectra with the floor-aware rank when X3 adopted it,
    and causal softmax heads by the causal fit's own knee held out, where the halves could be
    fitted (docs/method.md §3)."""
    if asked != AUTO_ESTIMATOR:
        return asked
    if case == "causal_softmax" and estimates and HELD_OUT_KNEE in estimates:
        return HELD_OUT_KNEE
    if FLOOR_FOR_SOFTMAX and case in SOFTMAX_CASES:
        return "floor"
    return DEFAULT_ESTIMATOR


def recommendation(preds, name, case, est, settings, shape, noise_est, conditioning, th) -> dict:
    """The recommended rank, its predictor and estimator, the gap and the safe rank when they
    differ, and the words (:func:`.why.explain`)."""
    value = preds[name]["estimates"][est]
    rec = {
        "min_qk_rank": int(round_rank(value)),
        "value": value,
        "predictor": name,
        "estimator": est,
    }
    rec.update(explain(shape.n, shape.d, preds, name, case, noise_est, conditioning, est, th))
    rec["tail_energy"] = tail_energy(preds[name]["spectrum"], rec["min_qk_rank"])
    rec.update(gap_and_safe(preds[name], est))
    return rec


def tail_energy(spectrum, rank: int) -> float:
    """The share of the spectrum's energy beyond the first ``rank`` singular values."""
    s = np.asarray(spectrum, dtype=float)
    total = float(np.sum(s**2))
    return float(np.sum(s[rank:] ** 2)) / total if total > 0 else 0.0


def gap_and_safe(pred: dict, est: str) -> dict:
    """The gap and the safe rank of the trusted spectrum, with the evidence: the floor and the
    share of the energy it holds. They mean one thing each, and gap <= safe always:

    * the safe rank is r_E(0.99), the least rank that holds 99 % of the energy, floor included;
    * the gap is the count of singular values above a flat floor (the floor-aware rank), when
      the spectrum has one below the safe rank's cut; where the floor-aware rank reads more
      than the safe rank (a spectrum that decays without a flat floor, as the causal fit's),
      there is no gap below the safe rank and the gap is the safe rank.

    ``gap_note`` says which one the recommendation is and what the other one is, when they
    differ."""
    s = np.asarray(pred["spectrum"], dtype=float)
    safe = int(round_rank(pred["estimates"][DEFAULT_ESTIMATOR]))
    gap = min(int(round_rank(pred["estimates"]["floor"])), safe)
    top = s[0] if len(s) and s[0] > 0 else 1.0
    floor = float(np.median(s[gap:]) / top) if gap < len(s) else 0.0
    total = float(np.sum(s**2))
    floor_share = float(np.sum(s[gap:] ** 2) / total) if total > 0 else 0.0
    out = {"gap_rank": gap, "safe_rank": safe, "floor": floor, "floor_energy": floor_share}
    if gap == safe:
        out["gap_note"] = None
        return out
    evidence = (
        f"{gap} singular value{'s stand' if gap != 1 else ' stands'} above a flat floor at "
        f"{floor:.3g} of s₁ (the floor-aware rank: the cut is 1.43 × the floor), and the floor "
        f"holds {floor_share:.1%} of the energy"
    )
    if est == "floor":
        out["gap_note"] = (
            f"the recommendation is the gap, {gap}: {evidence}; r_E(0.99) counts the floor and "
            f"gives {safe}, the safe rank if the floor is signal rather than noise or softmax's "
            "non-linear part"
        )
    else:
        out["gap_note"] = (
            f"the spectrum shows a gap at {gap}: {evidence}; the recommendation falls back to "
            f"the safe rank {safe} ({est}), which counts the floor"
            if safe > gap
            else f"the floor-aware rank reads {gap} where {est} reads {safe}: {evidence}"
        )
    return out


def heads_summary(reports: list[dict]) -> dict:
    """One recommendation for H heads (their reports, in head order): the largest rank over the
    heads, so that one query-key rank serves every head, the head that sets it, and every
    head's rank and confidence by its index."""
    recs = [r["recommendation"] for r in reports]
    top = max(range(len(recs)), key=lambda h: recs[h]["min_qk_rank"])
    return {
        "min_qk_rank": recs[top]["min_qk_rank"],
        "head": top,
        "confidence": recs[top]["confidence"],
        "basis": "the largest recommended rank over the heads: one query-key rank for every head",
        "by_head": [
            {
                "head": h,
                "min_qk_rank": r["min_qk_rank"],
                "confidence": r["confidence"],
                "predictor": r["predictor"],
                "estimator": r["estimator"],
            }
            for h, r in enumerate(recs)
        ],
    }


def general_notes(acc, shape: Shape, preds, name, th) -> list[str]:
    notes = []
    xbar_rms = float(torch.linalg.vector_norm(acc.xbar / acc.seen)) / math.sqrt(shape.d)
    x_rms = math.sqrt(acc.x2 / (acc.seen * shape.n * shape.d))
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
    return notes


def build_report(X, Y, shape, settings, source, meta, preds, noise_est, mix) -> dict:
    return {
        "input": {
            "source": source,
            "B": shape.B,
            "n": shape.n,
            "d": shape.d,
            "d_v": shape.dv,
            "head": settings.head if shape.heads is not None else None,
            "heads": shape.heads,
            "causal": settings.causal,
            "dtype": [str(X.dtype), str(Y.dtype)],
            "task_meta": {k: meta[k] for k in TASK_META_KEYS if k in meta} if meta else None,
        },
        "settings": {k: v for k, v in asdict(settings).items()},
        "predictors": preds,
        "static_fit_share": preds["P_static"].get("static_fit_share"),
        "frontier": {
            "n": shape.n,
            "d": shape.d,
            "regime": regime(shape.n, shape.d, THRESHOLDS),
            "noise": noise_est,
            "mixing": mix,
        },
    }


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
