"""What every data-only predictor shares: input checks and batching into groups, the centring
matrix J, and the log-inversion spectrum of a softmax operator (:mod:`.predictors` re-exports
the public names).
"""

from __future__ import annotations

import numpy as np
import torch

#: floor of the probabilities before the log-inversion of a softmax operator
DEFAULT_CLIP = 1e-12


def _as_groups(
    X, Y, name: str, any_dv: bool = False, keep_dtype: bool = False
) -> tuple[torch.Tensor, torch.Tensor, bool]:
    """X: [B, n, d] or [G, B, n, d] and Y of the same shape (``any_dv``: but any last axis
    d_v) as float64 tensors with a group axis, and whether there was none (``single``).
    ``keep_dtype``: as tensors of their own dtype (no float64 copy; the caller widens chunks)."""
    same = X is Y  # one array checked once (P_static's sides: 16M values each at d = n = 64)
    dtype = None if keep_dtype else torch.float64
    X = torch.as_tensor(np.asarray(X) if not torch.is_tensor(X) else X, dtype=dtype)
    Y = X if same else torch.as_tensor(np.asarray(Y) if not torch.is_tensor(Y) else Y, dtype=dtype)
    single = X.ndim == 3
    if X.ndim not in (3, 4):
        raise ValueError(
            f"{name}: X must have shape [B, n, d] or [G, B, n, d], got {tuple(X.shape)}"
        )
    if X.shape[:-1] != Y.shape[:-1] or (not any_dv and X.shape != Y.shape):
        raise ValueError(
            f"{name}: X and Y must have the same shape"
            + (" but the last (d_v)" if any_dv else "")
            + f", got {tuple(X.shape)} and {tuple(Y.shape)}"
        )
    if X.shape[-2] < 2:
        raise ValueError(f"{name}: sequences need n >= 2 tokens, got n = {X.shape[-2]}")
    if not (torch.isfinite(X).all() and (same or torch.isfinite(Y).all())):
        raise ValueError(f"{name}: X or Y contains NaN or Inf")
    if single:
        X, Y = X.unsqueeze(0), Y.unsqueeze(0)
    return X, Y, single


def _out(t: torch.Tensor, single: bool) -> np.ndarray:
    t = t.detach().cpu().numpy()
    return t[0] if single else t


def centering(n: int, dtype=torch.float64) -> torch.Tensor:
    """J = I − 11ᵀ/n."""
    return torch.eye(n, dtype=dtype) - 1.0 / n


def _desc_svdvals(M: torch.Tensor) -> torch.Tensor:
    return torch.linalg.svdvals(M)


def log_inversion_spectrum(M: torch.Tensor, clip: float = DEFAULT_CLIP) -> torch.Tensor:
    """Spectrum of log(clip(M)) J after rescaling rows of M to sum 1 ([..., n, n] -> [..., n]).

    For M = softmax_row(βS): log M = βS − lse·1ᵀ and the row term dies under J, so the
    spectrum is that of βSJ.
    """
    rows = M.sum(-1, keepdim=True)
    M = M / torch.where(rows.abs() > 0, rows, torch.ones_like(rows))
    return _desc_svdvals(torch.log(M.clamp_min(clip)) @ centering(M.shape[-1], M.dtype))
