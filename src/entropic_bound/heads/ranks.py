"""The three spectra of a head and their ranks (docs/method.md §9, items (a)–(c)).

(a) the learned query-key kernel W_Qᵀ W_K: its singular values [d_model];
(b) the head's logit energy field on held-out text: per sequence, the singular values of the
    causal, row-centred pre-softmax logits [B, n]; ranks are medians over sequences;
(c) P_attn's data-only spectrum (docs/method.md §3) of the head's captured input X (after
    LayerNorm, [B, n, d_model]) and output Y (per head, before the output projection,
    [B, n, d_head]): sqrt eig Σ_b Z_b Z_bᵀ with Z_b = X̃_b⁺ Y_b ([d_model, d_head]).

Each spectrum goes through the §2 estimators r_E(τ) and the stable rank, and through the
floor-aware rank where the spectrum has a floor (:func:`core.estimators.floor_reasons`): where
it has none (W_Qᵀ W_K's zeros beyond d_head, a smoothly decaying field) the rank is "not
applicable", NaN, and the column ``<spectrum>_floor_na`` says why ("" where it applies).
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import torch

from entropic_bound.core.estimators import (
    FLOOR_QUANTILE,
    energy_name,
    energy_rank,
    floor_rank,
    floor_reasons,
    stable_rank,
)
from entropic_bound.predict.attention import (
    attention_native_eig,
    attention_native_sum,
    attention_native_tokens,
)

#: the spectra of a head, in the order of the table's columns
SPECTRA = ("qk", "logit", "pattn")
#: the floor-aware rank's aspect ratio, as the registry's ``floor`` (β = 0: a *flat* floor, the
#: Gram spectra's null; docs/method.md §2). W_Qᵀ W_K and a logit field are square matrices,
#: whose noise bulk would be a quarter circle rather than flat; the rank does not model it, so
#: there it applies only where the bulk is flat, which a smooth decay is not
FLOOR_BETA = 0.0
#: the column of the floor-aware rank, and of the reason it does not apply
FLOOR_COLUMN, FLOOR_REASON = "floor_aware", "floor_na"


def estimator_columns(taus) -> list[str]:
    """The estimator names of one spectrum: energy_<τ> ..., stable, floor_aware."""
    return [*(energy_name(t) for t in taus), "stable", FLOOR_COLUMN]


def floor_of(s, beta: float, floor: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(floor-aware rank, reason) of spectra ``s: [..., k]``: the rank where the spectrum has a
    floor, NaN and the reason where it has none. ``floor``: ``quantile`` and ``flatness`` of
    :func:`core.estimators.floor_reasons` (the config's measure.floor_quantile,
    measure.floor_flatness)."""
    floor = floor or {}
    reasons = floor_reasons(
        s,
        beta,
        quantile=floor.get("quantile", FLOOR_QUANTILE),
        flatness=floor.get("flatness"),
    )
    rank = np.asarray(floor_rank(s, beta), float)
    return np.where(reasons == "", rank, np.nan), reasons


def ranks_of(s, taus) -> dict[str, np.ndarray]:
    """r_E(τ) and the stable rank of spectra ``s: [..., k]`` -> ``{name: [...]}``."""
    out = {energy_name(t): energy_rank(s, t) for t in taus}
    out["stable"] = stable_rank(s)
    return out


def kernel_spectrum(M: torch.Tensor) -> np.ndarray:
    """(a) singular values of the learned W_Qᵀ W_K [d_model, d_model], descending."""
    return torch.linalg.svdvals(M.double()).numpy()


def row_centred_logits(logits: torch.Tensor, causal: bool = True) -> torch.Tensor:
    """The logit field: [B, n, n] -> [B, n, n], row i centred over its allowed keys (j ≤ i when
    ``causal``, else all; the softmax is invariant to a per-row shift, so only the centred row
    is seen), the masked entries j > i set to 0."""
    n = logits.shape[-1]
    allowed = torch.ones(n, n, dtype=torch.bool, device=logits.device)
    allowed = torch.tril(allowed) if causal else allowed
    field = logits.double().masked_fill(~allowed, 0.0)
    counts = allowed.sum(-1, keepdim=True).to(field.dtype)  # i + 1 keys in row i
    centred = field - field.sum(-1, keepdim=True) / counts
    return centred.masked_fill(~allowed, 0.0)


def logit_field_spectra(logits: torch.Tensor) -> np.ndarray:
    """(b) per held-out sequence, singular values of the row-centred causal logits: [B, n]."""
    return torch.linalg.svdvals(row_centred_logits(logits)).cpu().numpy()


def pattn_spectrum(X: torch.Tensor, Y: torch.Tensor, rtol: float) -> np.ndarray:
    """(c) P_attn of a head: X [B, n, d_model], Y [B, n, d_v] (any d_v) -> [d_model].

    X̃ is P_attn's own (JX, tokens centred per sequence, when n > d; else X). Its inverse is a
    pseudo-inverse with relative cut-off ``rtol`` rather than P_attn's normal equations: a
    LayerNorm'd token lies on a hyperplane (its features sum to a constant), so after centring
    X̃ has rank ≤ d_model − 1 and its Gram matrix is singular, which P_attn refuses.
    """
    Xt = attention_native_tokens(X.double().cpu())
    pinv = torch.linalg.pinv(Xt, rtol=rtol)  # [B, d_model, n]
    Z = pinv @ Y.double().cpu()  # [B, d_model, d_v]
    return attention_native_eig(attention_native_sum(Z.unsqueeze(0)))[0].numpy()


def _per_window_floor(spectra: np.ndarray, beta: float, floor) -> tuple[float, str]:
    """The logit field's floor-aware rank over windows: the median over the windows whose
    spectrum has a floor, when at least half do; else NaN and the commonest reason."""
    rank, reasons = floor_of(spectra, beta, floor)
    has = reasons == ""
    if has.mean() >= 0.5:
        return float(np.median(rank[has])), ""
    common = Counter(reasons[~has].tolist()).most_common(1)[0][0]
    return float("nan"), f"{common} ({int(has.sum())}/{has.size} windows have a floor)"


def head_ranks(kernel_s, logit_s, pattn_s, taus, floor: dict | None = None) -> dict:
    """The row of ranks of one head: ``<spectrum>_<estimator>`` for (a), (b) (median over
    sequences) and (c), and ``<spectrum>_floor_na``, why the floor-aware rank is NaN ("" where
    it applies)."""
    row: dict = {}
    for name, s in (("qk", kernel_s), ("pattn", pattn_s)):
        row.update({f"{name}_{k}": float(v) for k, v in ranks_of(s, taus).items()})
        rank, reason = floor_of(s, FLOOR_BETA, floor)
        row[f"{name}_{FLOOR_COLUMN}"], row[f"{name}_{FLOOR_REASON}"] = float(rank), str(reason)
    per_sequence = ranks_of(logit_s, taus)
    row.update({f"logit_{k}": float(np.median(v)) for k, v in per_sequence.items()})
    rank, reason = _per_window_floor(logit_s, FLOOR_BETA, floor)
    row[f"logit_{FLOOR_COLUMN}"], row[f"logit_{FLOOR_REASON}"] = rank, reason
    return row
