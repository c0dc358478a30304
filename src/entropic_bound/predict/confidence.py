"""When the recommendation may undercount: the signals, read from the data, that lower its
confidence (docs/cli.md, "How confident the answer is").

The confidence of a case (:mod:`.why`) is what theory gives where its assumptions hold:
P_attn is exact for linear attention at n ≥ d, and for softmax attention it sees A's spectrum
only to first order in the logit scale β: the rest, O(β²) and beyond, adds a floor to the
spectrum, and the floor-aware cut keeps what stands above it. The answer undercounts when a
direction of the kernel sits at the floor, or when the data break an assumption the predictor
makes without checking it (which axis holds the tokens, whether a mask hid the future). Each
signal below is a property of the data that theory ties to one of these failures; none is a
threshold fitted to a test battery.

* **a direction at the floor** (softmax-like, floor-aware cut): singular values above the
  floor's bulk edge m·(1 + √((d − k)/N)) (m the floor's median, d − k its directions, N the
  sequences summed: the Marchenko–Pastur edge of a flat floor estimated from N samples) but
  below the cut 1.43·m are more than a white floor's own scatter: first-order signal the cut
  left out, or structure of the floor (softmax's non-linear part is not white). The answer
  becomes the count above the edge, the safe side of the two: the rank lies between them
  (``approximate (floor)``).
* **sharp attention**: the floor holds more energy than the first-order part (the energy
  beyond the cut ≥ ½): the expansion in β the predictor rests on no longer dominates the data,
  so directions of A can hide under the floor: the answer is a lower bound.
* **causal data without a mask**: under a causal mask the first token attends only to itself,
  so its output is a fixed linear map of its own input (exactly, for softmax), while the last
  token's mixes all of them. R² of the first token's output on its own input ≥ 0.99 while the
  last token's is below 0.9 (for a token-wise map both are 1, for attention over all tokens
  both are alike): the data look causal, but were read as not.
* **tokens on the first axis** ([n, B, d], torch's ``batch_first=False``): attention mixes the
  tokens of one sequence, so their outputs share a common part along the token axis (the
  mean-token index, :func:`.placement.mixing`). The same index along the first axis
  (B²·Σ_j‖ȳ_·j − μ‖² / Σ‖Y − μ‖², the mean over the first axis at each position j) ≫ 1 and
  above the index along the second axis says that the first axis holds the tokens.

* **a rank that moves with the amount of data** (P_attn, not causal): the chosen estimator read
  on the even- and on the odd-numbered sequences alone (each half of C). A kernel's rank does
  not depend on how many sequences show it; a floor of estimation noise (the non-linear part
  amplified by (X̃ᵀX̃)⁻¹, which averages down as sequences are added) does. When either half
  reads a rank more than SPLIT_HALF_TOL (and at least one) away from the whole, the answer is
  counting that floor and carries no promise (``low``; the fix: more sequences, or longer ones).

Confident words (exact, first-order, exact at zero noise) stay only where no signal fires; the
word left is the weakest of the signals' (``low`` > ``lower bound`` > ``approximate (floor)``).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from entropic_bound.predict.causal_signals import HELD_OUT_KNEE, causal_signals, causal_word

#: the Gavish–Donoho factor of the floor-aware rank (docs/method.md §2): cut = 1.43 × the floor
FLOOR_CUT = 1.43
#: the floor outweighs the first-order part: the energy beyond the cut at least this share
SHARP_FLOOR_SHARE = 0.5
#: a causal mask: the first token's output fits its own input to at least this R² (exactly 1
#: for causal softmax up to noise), the last token's to less than LAST_TOKEN_R2 (it mixes all)
FIRST_TOKEN_R2 = 0.99
LAST_TOKEN_R2 = 0.9
#: the first axis holds the tokens: its mean-token index at least this (the softmax-like
#: threshold of the token axis, placement.mixing) and above the second axis's index
AXIS_INDEX = 1.5
#: sequences whose first and last tokens are kept for the causal signature (d + 1 unknowns a
#: column; 4096 rows fit R² to ~1e-3 at d = 64)
ENDS_SEQUENCES = 4096
#: a half of the sequences may read the rank this share (at least 1) away from the whole
SPLIT_HALF_TOL = 0.1
#: the confidences that claim the answer holds
CONFIDENT = ("exact", "first-order", "exact at zero noise")


class Tally:
    """The sums of the signals, filled during the one pass (:mod:`.scan`): Y summed over the
    first axis at each position, and the first and last tokens of the first sequences."""

    def __init__(self):
        self.seen = 0
        self.ypos: np.ndarray | None = None  # Σ_b Y_b: [n, d_v]
        self.ends: list[tuple[np.ndarray, ...]] = []
        self.kept = 0

    def add(self, X: np.ndarray, Y: np.ndarray) -> None:
        """One chunk X: [b, n, d], Y: [b, n, d_v] (float64)."""
        if len(X) == 0:
            return
        s = Y.sum(0)
        self.ypos = s if self.ypos is None else self.ypos + s
        self.seen += len(X)
        take = min(len(X), ENDS_SEQUENCES - self.kept)
        if take > 0:
            ends = (X[:take, 0], Y[:take, 0], X[:take, -1], Y[:take, -1])
            self.ends.append(tuple(np.array(a) for a in ends))  # copies: the chunk is freed
            self.kept += take


def _r2(x: np.ndarray, y: np.ndarray) -> float | None:
    """R² of the least squares y ~ [1, x] over rows (None when too few rows to tell)."""
    if len(x) < 2 * (x.shape[1] + 1):
        return None
    x1 = np.concatenate([np.ones((len(x), 1)), x], 1)
    coef, *_ = np.linalg.lstsq(x1, y, rcond=None)
    yc = y - y.mean(0)
    total = float(np.sum(yc**2))
    if total <= 0:
        return None
    return 1.0 - float(np.sum((y - x1 @ coef) ** 2)) / total


def causal_signature(tally: Tally) -> dict:
    """R² of the first and the last token's output on its own input, and whether they say
    causal (see the module's docstring)."""
    if not tally.ends:
        return {"first_r2": None, "last_r2": None, "looks_causal": False}
    x0, y0, xl, yl = (np.concatenate(v) for v in zip(*tally.ends))
    first, last = _r2(x0, y0), _r2(xl, yl)
    looks = first is not None and last is not None
    looks = looks and first >= FIRST_TOKEN_R2 and last < LAST_TOKEN_R2
    return {"first_r2": first, "last_r2": last, "looks_causal": bool(looks)}


def axis_index(tally: Tally, acc) -> float | None:
    """The mean-token index along the first axis: B²·Σ_j‖ȳ_·j − μ‖² / Σ‖Y − μ‖² (μ the global
    mean token), ≈ 1 when sequences are independent."""
    N, n = tally.seen, acc.n
    if N < 2 or tally.ypos is None:
        return None
    mu = tally.ypos.sum(0) / (N * n)
    num = float(np.sum((tally.ypos / N - mu) ** 2)) * N  # Σ_j N‖ȳ_·j − μ‖²
    den = acc.y2 - N * n * float(mu @ mu)
    if den <= 1e-12 * max(acc.y2, 1e-300):
        return None
    return N * num / den


def edge_rank(spectrum, gap: int, sequences: int) -> tuple[int, float]:
    """The count of singular values above the floor's bulk edge (and the edge, a share of s₁)."""
    s = np.asarray(spectrum, dtype=float)
    d = len(s)
    if gap >= d or not len(s) or s[0] <= 0:
        return gap, 0.0
    floor = float(np.median(s[gap:]))
    edge = floor * (1 + math.sqrt((d - gap) / max(sequences, 1)))
    return max(gap, int(np.sum(s > edge))), edge / s[0]


def split_half(acc, estimator: str, d: int) -> tuple[int, int, int] | None:
    """The chosen estimator's rank on the even-numbered sequences, the odd ones and all of
    them (each spectrum padded to d), or None without the halves."""
    from entropic_bound.core.estimators import estimate, round_rank
    from entropic_bound.predict.attention import attention_native_eig

    if acc.C is None or acc.C_even is None or acc.seen < 4:
        return None
    ranks = []
    for C in (acc.C_even, acc.C - acc.C_even, acc.C):
        s = attention_native_eig(C.to(torch.float64))[0].numpy()
        s = np.concatenate([s, np.zeros(d - len(s))])
        ranks.append(int(round_rank(estimate(s, estimator))))
    return tuple(ranks)


def assess(rec: dict, case: str, pred: dict, mix: dict, tally: Tally, acc, causal: bool) -> dict:
    """The signals, and the recommendation they leave: ``rec`` updated in place with the rank
    (raised to the edge count when directions stand between the floor's edge and the cut),
    the confidence (lowered where a signal fires), ``signals`` and ``lowered_by``."""
    signals: dict = {}
    lowered: list[tuple[str, str]] = []  # (the confidence it leaves, why)
    fixes: list[str] = []

    def add(word: str, why: str) -> None:
        lowered.append((word, why))

    softmax = mix.get("label") == "softmax-like"
    if case == "causal_softmax" and rec["estimator"] == HELD_OUT_KNEE:
        signals.update(causal_signals(pred, rec["min_qk_rank"]))
        rec["confidence"], why = causal_word(signals)
        rec["why"] += "; " + why
    if rec["predictor"] == "P_attn" and softmax and not causal:
        share = float(rec["tail_energy"])
        signals["floor_share"] = share
        if share >= SHARP_FLOOR_SHARE:
            add(
                "lower bound",
                f"the floor holds {share:.0%} of P_attn's energy, more than the first-order "
                "part: attention this sharp is beyond the first order in β that P_attn reads, "
                "and directions of A can hide under the floor; the answer is a lower bound",
            )
            fixes.append(
                f"train a rank sweep from {rec['min_qk_rank']} up to the safe rank "
                f"{rec['safe_rank']}"
            )
    if rec["predictor"] == "P_attn" and rec["estimator"] == "floor" and not causal:
        k, edge = edge_rank(pred["spectrum"], rec["min_qk_rank"], pred["sequences_used"])
        signals["edge_rank"], signals["floor_edge"] = k, edge
        if k > rec["min_qk_rank"]:
            add(
                "approximate (floor)",
                f"{k - rec['min_qk_rank']} more singular value(s) stand above the floor's bulk "
                f"edge ({edge:.3g} of s₁: its median × (1 + √((d − k)/N))) but below the cut "
                f"{FLOOR_CUT} × the floor: directions of the kernel at the floor, which the "
                f"floor-aware rank leaves out, or structure of the floor itself (softmax's "
                f"non-linear part is not white noise); the answer is raised from "
                f"{rec['min_qk_rank']} to {k}, the safe side: the rank lies between them",
            )
            gap, rec["min_qk_rank"] = rec["min_qk_rank"], k
            if rec.get("gap_note"):
                rec["gap_note"] = rec["gap_note"].replace(
                    f"the recommendation is the gap, {gap}:",
                    f"the gap is {gap}, and the recommendation adds the values above the "
                    "floor's edge:",
                )
            fixes.append(
                f"train ranks {gap} to {k} and keep the least that fits: the rank lies between"
            )
    if rec["predictor"] == "P_attn" and not causal:
        halves = split_half(acc, rec["estimator"], len(pred["spectrum"]))
        signals["split_half_ranks"] = halves
        if halves is not None:
            even, odd, whole = halves
            tol = max(1, math.ceil(SPLIT_HALF_TOL * whole))
            if max(abs(even - whole), abs(odd - whole)) > tol:
                add(
                    "low",
                    f"the rank moves with the amount of data: {rec['estimator']} reads {even} on "
                    f"the even-numbered sequences and {odd} on the odd ones, against {whole} on "
                    "all: a kernel's rank does not depend on how many sequences show it, a floor "
                    "of estimation noise does, so the answer counts that floor",
                )
                fixes.append("supply more sequences (or longer ones, n well above d)")
    sig = causal_signature(tally)
    signals.update(first_token_r2=sig["first_r2"], last_token_r2=sig["last_r2"])
    if sig["looks_causal"] and not causal:
        add(
            "low",
            f"the data look causal: the first token's output is a linear map of its own input "
            f"(R² {sig['first_r2']:.3f}) while the last token's is not (R² "
            f"{sig['last_r2']:.2f}), as under a causal mask, but they were read without one",
        )
        fixes.append("pass --causal (causal=True), or save the mask as `mask` in the .npz")
    idx = axis_index(tally, acc)
    signals["first_axis_index"] = idx
    token_idx = mix.get("mean_token_index")
    if idx is not None and idx >= AXIS_INDEX and (token_idx is None or idx > token_idx):
        add(
            "low",
            f"the first axis looks like the tokens: outputs share a common part along it "
            f"(mean-token index {idx:.2f} along the first axis, "
            + (f"{token_idx:.2f}" if token_idx is not None else "none")
            + " along the second), as attention gives along a sequence",
        )
        fixes.append(
            "if X is [n, B, d] (torch's batch_first=False), transpose X and Y to [B, n, d]"
        )
    if any(word != "low" for word, _ in lowered):  # a floor: one more cause that has a fix
        fixes.append(
            "if Y is the output of several heads mixed by an out-projection, save each head's "
            "output before it as Y [B, H, n, d_v]: one answer per head"
        )
    rec["signals"] = signals
    rec["lowered_by"] = [why for _, why in lowered]
    if lowered and rec["confidence"] in CONFIDENT + ("approximate (noise)",):
        rec["confidence"] = _word([word for word, _ in lowered])
    if lowered:
        joined = "; and ".join(rec["lowered_by"])
        rec["why"] += ("; and " if "; but " in rec["why"] else "; but ") + joined
        rec["fix"] = "; ".join(dict.fromkeys(fixes))
    return rec


def _word(words: list[str]) -> str:
    """The confidence the signals leave, the weakest of theirs: ``low`` when the data break an
    assumption (causal without the mask, tokens on the first axis), else ``lower bound`` when
    the floor outweighs the first-order part, else ``approximate (floor)`` (the rank lies
    between the gap and the edge)."""
    for word in ("low", "lower bound"):
        if word in words:
            return word
    return "approximate (floor)"
