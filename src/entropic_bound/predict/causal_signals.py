"""What the causal fit says about its own reliability (docs/method.md §9f): signals read from the
fit's report entry (:func:`.entries.causal_entry`), none from any truth. A confidence word on a
causal softmax head rests on them; the heads studies measure how well each separates right
answers from wrong ones (``heads.promises``).

* ``split_half``: how far r_E(0.99) of the halves' fits (even- and odd-numbered sequences) lies
  from the whole fit's: a kernel's rank does not depend on which sequences show it.
* ``starts_spread``: the range of r_E(0.99) over the starts whose residual is within
  :data:`STARTS_AGREE` of the least: equally good fits that read different ranks.
* ``residual_share``: the share of Y's energy the first-order form leaves unfitted (sharp
  attention leaves more).
* ``energy_spread``: r_E(0.99) − r_E(0.9) of the fit's spectrum: a tail without a gap (wide).
* ``gap_ratio``: s_{r+1}/s_r at the answer r: how little the spectrum falls where it cuts.
* ``iterations``: L-BFGS iterations of the kept start (sharp attention is a harder fit).
"""

from __future__ import annotations

import numpy as np

from entropic_bound.core.estimators import estimate, round_rank

#: the causal fit's own knee, held out (docs/method.md §3, "The fit's own knee"): the least rank
#: whose held-out residual is within this share of the ablation's gap of the best rank's. 0.1,
#: set on registration H1's heads (docs/method.md §9f: mean |error| 2.46 against the inputs'
#: metric knee, 2.39 at 0.05, 7.39 at 0.01; at 0.1 a word can be carried on 42 of 54 heads)
HELD_OUT_KNEE = "held_out_knee"
HELD_OUT_FRACTION = 0.1
#: starts within this relative residual of the least count as reaching the same fit
STARTS_AGREE = 1e-3
#: the estimator the spectra-based signals read (the paper's default)
SIGNAL_ESTIMATOR = "energy_0.99"
SIGNALS = (
    "split_half",
    "starts_spread",
    "residual_share",
    "energy_spread",
    "gap_ratio",
    "iterations",
)


def _rank(spectrum, estimator: str = SIGNAL_ESTIMATOR) -> float:
    return float(round_rank(estimate(np.asarray(spectrum, dtype=np.float64), estimator)))


def causal_signals(entry: dict, answer: float) -> dict:
    """Every signal of :data:`SIGNALS` from a causal fit's report entry (``spectrum``,
    ``half_spectra``, ``starts``, ``residual_share``, ``iterations``; a missing one gives NaN)
    and the recommended rank ``answer``."""
    out = dict.fromkeys(SIGNALS, np.nan)
    s = entry.get("spectrum")
    s = None if s is None else np.asarray(s, dtype=np.float64)
    whole = None
    if s is not None and len(s) and s[0] > 0:
        whole = _rank(s)
        out["energy_spread"] = whole - _rank(s, "energy_0.9")
        r = int(answer)
        out["gap_ratio"] = float(s[r] / s[r - 1]) if 0 < r < len(s) and s[r - 1] > 0 else 0.0
    halves = entry.get("half_spectra")
    if halves and whole is not None:
        out["split_half"] = max(abs(_rank(h) - whole) for h in halves)
    starts = entry.get("starts") or []
    if starts:
        best = min(st["residual"] for st in starts)
        ranks = [
            _rank(st["spectrum"]) for st in starts if st["residual"] <= best * (1 + STARTS_AGREE)
        ]
        out["starts_spread"] = max(ranks) - min(ranks)
    for key in ("residual_share", "iterations"):
        if entry.get(key) is not None:
            out[key] = float(entry[key])
    return out


#: the word a causal softmax head's held-out knee carries, and the signal it rests on: given only
#: where the signal is on the side the rule names, set on registration H1's heads (docs/method.md
#: §9f) and tested on H2's under registration H4; elsewhere the answer carries no promise (low)
#: (on H1: residual share ≤ 0.2 on 36 of 54 eligible heads, none broken; the first broken at 0.256)
CAUSAL_RULE = {"word": "lower bound", "signal": "residual_share", "sense": "<=", "threshold": 0.2}


def causal_word(signals: dict, rule: dict = CAUSAL_RULE) -> tuple[str, str]:
    """(word, why) for a causal softmax head's held-out knee: ``rule['word']`` where its signal
    is on the rule's side of the threshold, else ``low``."""
    value = signals.get(rule["signal"])
    side = "at most" if rule["sense"] == "<=" else "at least"
    where = f"{rule['signal']} {side} {rule['threshold']:g}"
    if value is None or not np.isfinite(value):
        return "low", f"the signal {rule['signal']} could not be read, so no promise ({where} is)"
    ok = value <= rule["threshold"] if rule["sense"] == "<=" else value >= rule["threshold"]
    if ok:
        return rule["word"], (
            f"{rule['signal']} is {value:g} ({where}): on the trained heads where that held, the "
            f"fit's own knee was a {rule['word']} of the knee in the inputs' metric "
            "(docs/method.md §9f)"
        )
    return "low", (
        f"{rule['signal']} is {value:g}, not {where}: on such heads the fit's own knee strayed "
        "both ways from the knee, so it promises nothing (docs/method.md §9f)"
    )
