"""The tokens in the data's own scale (docs/method.md §3): the directions they vary in, and
the whitening that reads a kernel there, C^½ A C^½ (C the tokens' covariance).

A LayerNorm's output x = γ ⊙ z + b has xᵀ(1/γ) the same for every token: the data say nothing
along 1/γ, so no predictor should fit or report a direction there; and anisotropic tokens make
a raw-coordinate kernel weigh directions the tokens barely excite as much as the ones they
fill. P_attn (in ``predict``'s pass) and the causal fit both read the kernel through these.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import torch

#: a direction of the tokens whose variance is below this share of the largest is one the data
#: do not vary in: a LayerNorm's 1/γ or a constant feature (exactly 0 up to rounding, ~1e-14 for
#: float32 data; a real direction this weak moves the logits by ≤ 1e-4 of their scale)
NULL_RCOND = 1e-8


def varying_directions(G: torch.Tensor, rcond: float = NULL_RCOND):
    """(eigenvalues, eigenvectors) of the symmetric PSD G: [d, d] whose eigenvalue exceeds
    ``rcond`` × the largest (none when G is zero): the directions the tokens vary in."""
    evals, evecs = torch.linalg.eigh(G)
    top = float(evals[-1]) if len(evals) else 0.0
    keep = evals > rcond * top if top > 0 else torch.zeros_like(evals, dtype=torch.bool)
    return evals[keep], evecs[:, keep]


def whitening(G: torch.Tensor, rcond: float = NULL_RCOND) -> torch.Tensor:
    """T: [d, k] with Tᵀ G T = I on the directions the tokens vary in (:func:`varying_directions`):
    the others (a LayerNorm's 1/γ, a constant feature) are dropped, the data say nothing there."""
    evals, evecs = varying_directions(G, rcond)
    return evecs / evals.sqrt()


def second_moment(X: torch.Tensor) -> torch.Tensor:
    """E[x xᵀ] over every token of X [..., d], float64."""
    flat = X.reshape(-1, X.shape[-1]).double()
    return flat.T @ flat / flat.shape[0]


def metric_factors(Wq: torch.Tensor, Wk: torch.Tensor, G=None, rcond: float = NULL_RCOND):
    """(L, s, R) with W_Qᵀ W_K's best rank-r part in the metric of G (the inputs' second moment)
    ``L[:, :r] diag(s[:r]) R[:, :r]ᵀ`` for every r: G^{+½} [G^½ W_Qᵀ W_K G^½]_r G^{+½} on the
    directions the tokens vary in (:func:`varying_directions`); G None: the plain SVD. From a QR
    of each side and the SVD of the small core. ``Wq``, ``Wk``: [d_head, d]."""
    Aq, Ak = Wq.double().T, Wk.double().T
    if G is not None:
        evals, U = varying_directions(G.double(), rcond)
        T, root = U / evals.sqrt(), U * evals.sqrt()  # Tᵀ G T = I; G = root rootᵀ on the range
        Aq, Ak = root.T @ Aq, root.T @ Ak
    Qa, Ra = torch.linalg.qr(Aq)
    Qb, Rb = torch.linalg.qr(Ak)
    u, s, vh = torch.linalg.svd(Ra @ Rb.T)
    left, right = Qa @ u, Qb @ vh.T
    return (left, s, right) if G is None else (T @ left, s, T @ right)


def data_scale_basis(gram: np.ndarray, tokens: int) -> np.ndarray | None:
    """T = U Λ^{-½} [d, k] from the centred tokens' Σ x̃ x̃ᵀ over ``tokens`` tokens: the
    directions they vary in (:func:`varying_directions` of their covariance C), whitened, so
    that X T has identity covariance and a kernel read through it is C^½ A C^½ (the data's own
    scale); None when nothing varies or the sums are not finite."""
    if tokens <= 0 or not np.isfinite(gram).all():
        return None
    T = whitening(torch.from_numpy(gram / tokens))
    return T.numpy() if T.shape[1] else None


def centred_gram(X: np.ndarray) -> np.ndarray:
    """Σ over sequences and tokens of x̃ x̃ᵀ, x̃ each token less its sequence's mean: [d, d]."""
    xc = X - X.mean(-2, keepdims=True)
    flat = xc.reshape(-1, X.shape[-1])
    return flat.T @ flat


#: the sequences (of P_attn's subsample, from the top of the file) whose centred tokens decide
#: the directions they vary in (token_basis)
BASIS_SEQUENCES = 4096


def token_basis(chunks: Iterable[np.ndarray], limit: int = BASIS_SEQUENCES) -> np.ndarray | None:
    """The tokens' coordinates for P_attn: T [d, k] = U Λ^{-½} over the directions the centred
    tokens vary in (U, Λ: the eigenpairs of their covariance C above NULL_RCOND), so that
    P_attn reads the kernel in the data's own scale, C^½ A C^½ (docs/method.md §3). Two things
    go wrong in the tokens' raw coordinates: a LayerNorm's output x = γ ⊙ z + b has xᵀ(1/γ) the
    same for every token, so J X_b (1/γ) = 0 and X̃_b has no inverse in d dimensions; and
    (X̃_bᵀX̃_b)⁻¹ amplifies what the first-order form cannot fit in the tokens' weak directions
    into a floor as high as the kernel. ``chunks``: [b, n, d] arrays of sequences, read until
    ``limit`` sequences (predict: the first of P_attn's subsample, where it centres, n > d)."""
    gram, seen, n = None, 0, 0
    with np.errstate(all="ignore"):  # NaN or inf: no basis, and the pass names the value
        for chunk in chunks:
            xa = np.array(chunk, dtype=np.float64)
            g = centred_gram(xa)
            gram = g if gram is None else gram + g
            seen, n = seen + len(xa), xa.shape[-2]
            if seen >= limit:
                break
    return None if gram is None else data_scale_basis(gram, seen * n)
