"""The three spectra of a head and their ranks (docs/method.md §9, items (a)–(c)).

(a) the learned query-key kernel W_Qᵀ W_K: its singular values [d_model];
(b) the head's logit energy field on held-out text: per sequence, the singular values of the
    causal, row-centred pre-softmax logits [B, n]; ranks are medians over sequences;
(c) P_attn's data-only spectrum (docs/method.md §3) of the head's captured input X (after
    LayerNorm, [B, n, d_model]) and output Y (per head, before the output projection,
    [B, n, d_head]): sqrt eig Σ_b Z_b Z_bᵀ with Z_b = X̃_b⁺ Y_b ([d_model, d_head]).

Each spectrum goes through the §2 estimators r_E(τ) and the stable rank, and through the
floor-aware estimator of issue 22 item 1 once it exists (:data:`FLOOR_AWARE`).
"""

from __future__ import annotations

import numpy as np
import torch

from entropic_bound.core.estimators import energy_name, energy_rank, floor_rank, stable_rank
from entropic_bound.predict.attention import (
    attention_native_eig,
    attention_native_sum,
    attention_native_tokens,
)

# the floor-aware rank (docs/method.md §2) at its default aspect ratio β = 0, the regime of
# P_attn's Gram matrix; for the square W_QᵀW_K and logit fields (β = 1) its Gavish–Donoho cut is
# the lower one, so there it counts at least as many components as the square-matrix cut would
FLOOR_AWARE = floor_rank

#: the spectra of a head, in the order of the table's columns
SPECTRA = ("qk", "logit", "pattn")


def estimator_columns(taus) -> list[str]:
    """The estimator names of one spectrum: energy_<τ> ..., stable, floor_aware."""
    return [*(energy_name(t) for t in taus), "stable", "floor_aware"]


def ranks_of(s, taus) -> dict[str, np.ndarray]:
    """Every estimator of spectra ``s: [..., k]`` -> ``{name: [...]}``."""
    out = {energy_name(t): energy_rank(s, t) for t in taus}
    out["stable"] = stable_rank(s)
    nan = np.full(np.shape(s)[:-1], np.nan)
    out["floor_aware"] = nan if FLOOR_AWARE is None else np.asarray(FLOOR_AWARE(s), float)
    return out


def kernel_spectrum(M: torch.Tensor) -> np.ndarray:
    """(a) singular values of the learned W_Qᵀ W_K [d_model, d_model], descending."""
    return torch.linalg.svdvals(M.double()).numpy()


def row_centred_logits(logits: torch.Tensor) -> torch.Tensor:
    """The causal logit field: [B, n, n] -> [B, n, n], row i centred over its allowed keys
    j ≤ i (the softmax is invariant to a per-row shift, so only the centred row is seen),
    the masked entries j > i set to 0."""
    n = logits.shape[-1]
    allowed = torch.tril(torch.ones(n, n, dtype=torch.bool, device=logits.device))
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


def head_ranks(kernel_s, logit_s, pattn_s, taus) -> dict[str, float]:
    """The row of ranks of one head: ``<spectrum>_<estimator>`` for (a), (b) (median over
    sequences) and (c)."""
    row = {}
    for name, s in (("qk", kernel_s), ("pattn", pattn_s)):
        row.update({f"{name}_{k}": float(v) for k, v in ranks_of(s, taus).items()})
    per_sequence = ranks_of(logit_s, taus)
    row.update({f"logit_{k}": float(np.median(v)) for k, v in per_sequence.items()})
    return row
