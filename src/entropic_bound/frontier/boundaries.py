"""Frontier boundaries, exploratory (no verdict; docs/method.md §8): how much noise, and how many
sequences, each data-only predictor tolerates.

For a *curve*, a predictor × data class × value map × n × β × data budget B, the exact rate
(claims estimator, rounded, = r*) over the frontier's r* × seeds is a function of the noise σ.
Its noise tolerance σ_q is the largest σ of a log grid at which the rate is still ≥ q
(q = 0.5: σ₅₀, q = 0.95: σ₉₅), found by bisection on the grid index: the rate is taken to be
non-increasing in σ, which common random numbers make nearly true (every σ of a curve uses the
same X, the same unit noise E and the same kernels, Y = clean + σE). It is reported in absolute
terms and relative to the standard deviation of the clean output, since the classes' outputs
differ 3–5× in scale (docs/method.md §1). Conventions: σ_q = 0 when the clean rate is already
below q (no tolerance) or when the rate at the smallest grid σ is; σ_q = inf when the whole
grid passes.

Inputs are the frontier's own (``frontier.frontier_inputs``, ``frontier.frontier_kernel``):
at the frontier's B the σ = 0 and σ-grid cells are those of ``frontier.csv``.

Besides P_attn and P_invert as published, two variants isolate the mechanisms the abstract's
"partial" can come from:

* ``P_invert_linear`` (nonlinear inversion): the same X, noise, B, P̂ = Y V⁻¹ X⁺ and least
  squares, on the linear twin of softmax attention, M = β X A Xᵀ/√d (the softmax's logits,
  class ``L4lin``), with no log: the gap to P_invert is the log's doing.
* ``P_invert_V=I`` (kernel–value identifiability): P_invert assuming V = I on data whose value
  map is the unknown Haar V.

Per teacher (X1_teachers: frontier/teachers.py): each case's own tolerance of P_invert and its
linear twin, scanned on the same grid with the same curves (:func:`boundaries_tables`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from entropic_bound.core.estimators import DEFAULT_TOL, estimate, round_rank
from entropic_bound.core.progress import report
from entropic_bound.frontier.grid import frontier_inputs, frontier_kernel, qk_logits, qk_operator
from entropic_bound.frontier.teachers import TEACHER_PREDICTORS, teacher_rows, teachers_frame
from entropic_bound.predict.attention import (
    attention_native_eig,
    attention_native_gram,
    attention_native_pinv,
)
from entropic_bound.predict.base import DEFAULT_CLIP, centering
from entropic_bound.predict.inversion import (
    inversion_kernel,
    inversion_normal_matrix,
    operator_to_kernel,
    token_pinv_exact,
)

#: exploratory tables carry this label (they were not pre-registered)
EXPLORATORY = "exploratory: no verdict"
#: the exact rates whose noise tolerance is reported: σ₅₀ and σ₉₅
QUANTILES = (0.5, 0.95)

COLUMNS = [
    "predictor",
    "class",
    "value_map",
    "n",
    "d",
    "beta",
    "n_seqs",
    "frontier_budget",
    "n_cases",
    "clean_std",
    "rate_clean",
    "sigma50",
    "sigma95",
    "sigma50_rel",
    "sigma95_rel",
    "n_evals",
]


def log_grid(lo: float, hi: float, per_decade: int) -> np.ndarray:
    """σ grid lo·10^(k/per_decade), k = 0, 1, ... up to hi (inclusive within rounding)."""
    if not 0 < lo < hi or per_decade < 1:
        raise ValueError(f"log grid needs 0 < lo < hi and per_decade >= 1, got {lo}, {hi}")
    k = int(math.floor(per_decade * math.log10(hi / lo) + 1e-9))
    return lo * 10.0 ** (np.arange(k + 1) / per_decade)


def noise_tolerance(
    rate_at: Callable[[int], float], size: int, q: float, start: int | None = None
) -> int:
    """Largest grid index k in [0, size) with rate_at(k) ≥ q; -1 when rate_at(0) < q, ``size``
    when rate_at(size - 1) ≥ q. ``rate_at(-1)`` is the clean rate, asked first (a predictor
    that fails clean has no tolerance: -1).

    Bisection; with ``start`` (a guess, e.g. the answer at a smaller data budget) it first
    gallops up from the guess (start + 1, + 2, + 4, ...) and bisects the bracket it finds, or
    bisects below the guess if the guess fails. Assumes the rate is non-increasing in k;
    otherwise the answer is one crossing of q.
    """
    if rate_at(-1) < q:
        return -1
    if start is None or not 0 <= start < size:
        if rate_at(size - 1) >= q:
            return size
        lo, hi = -1, size - 1
    elif rate_at(start) < q:
        lo, hi = -1, start
    else:
        lo, step = start, 1
        while True:
            nxt = start + step
            if nxt >= size - 1:
                if rate_at(size - 1) >= q:
                    return size
                hi = size - 1
                break
            if rate_at(nxt) < q:
                hi = nxt
                break
            lo, step = nxt, 2 * step
    while hi - lo > 1:  # rate_at(lo) ≥ q > rate_at(hi)
        mid = (lo + hi) // 2
        if rate_at(mid) >= q:
            lo = mid
        else:
            hi = mid
    return lo


class Curve:
    """One predictor on one data setting, every r* × seed stacked along a case axis G.

    ``clean: [G, B, n, d]`` (for its std), ``r_star: [G]``, ``seed: [G]`` (the cases' seeds,
    for X1_teachers: teachers.py); ``spectrum_at(σ) -> [G, k]``, the predictor's spectrum on
    Y = clean + σE.
    """

    def __init__(
        self, key: dict, clean, r_star, spectrum_at, estimator: str, tol: float, seed=None
    ):
        self.key, self.clean = key, clean
        self.r_star = np.asarray(r_star, dtype=np.float64)
        self.seed = seed
        self.spectrum_at, self.estimator, self.tol = spectrum_at, estimator, tol
        self.cache: dict[float, float] = {}
        self.exact: dict[float, np.ndarray] = {}

    def hits(self, sigma: float) -> np.ndarray:
        """[G] bool: each case's rounded estimate is r* at noise σ (cached; all False when the
        spectrum is not finite)."""
        if sigma not in self.exact:
            spec = self.spectrum_at(sigma).numpy()
            r = estimate(spec, self.estimator, tol=self.tol) if np.isfinite(spec).all() else None
            hit = np.zeros(len(self.r_star), bool) if r is None else round_rank(r) == self.r_star
            self.exact[sigma] = hit
        return self.exact[sigma]

    def rate(self, sigma: float) -> float:
        """Exact rate at noise σ (cached: bisections of σ₅₀ and σ₉₅ share evaluations)."""
        if sigma not in self.cache:
            self.cache[sigma] = float(np.mean(self.hits(sigma)))
        return self.cache[sigma]

    def boundaries(
        self, grid: np.ndarray, quantiles=QUANTILES, hints: dict | None = None
    ) -> tuple[dict, dict]:
        """The table row (σ_q of ``quantiles``, others NaN) and the grid index of each σ_q,
        to pass as ``hints`` to the same curve at the next data budget."""

        def at(k: int) -> float:
            return self.rate(0.0 if k < 0 else float(grid[k]))

        std = float(self.clean.std(unbiased=False))
        out = {**self.key, "n_cases": len(self.r_star), "clean_std": std, "rate_clean": at(-1)}
        found = {}
        for q in QUANTILES:
            tag = f"sigma{round(100 * q)}"
            if q not in quantiles:
                out[tag] = out[f"{tag}_rel"] = math.nan
                continue
            k = noise_tolerance(at, len(grid), q, (hints or {}).get(q))
            found[q] = k
            sig = 0.0 if k < 0 else (math.inf if k >= len(grid) else float(grid[k]))
            out[tag], out[f"{tag}_rel"] = sig, sig / std if std > 0 else math.nan
        out["n_evals"] = len(self.cache)
        return out, found


@dataclass
class _CellCases:
    """The frontier's inputs of one (n, B), every r* × seed stacked along a case axis G (case
    g = (seed index, r* index): X repeats over r*, A over seeds), and what every curve of the
    cell shares. ``invertible`` (n ≤ d and enough equations, B·n(n−1) ≥ d²): P_invert and its
    linear twin apply, and ``chol``, ``Xp``, ``NE`` are set."""

    n: int
    d: int
    n_seqs: int
    X: torch.Tensor  # [G, B, n, d] tokens
    E: torch.Tensor  # [G, B, n, d] unit noise
    V: torch.Tensor  # [G, 1, d, d] the Haar value map
    XAX: torch.Tensor  # [G, B, n, n]
    r_star: np.ndarray  # [G]
    pinv: torch.Tensor  # P_attn's X̃⁺: [G, B, d, n]
    invertible: bool
    chol: torch.Tensor | None = None  # P_invert's normal matrix, Cholesky: [G, d², d²]
    Xp: torch.Tensor | None = None  # token X⁺: [G, B, d, n]
    NE: torch.Tensor | None = None  # E X⁺: [G, B, n, n]
    JX: torch.Tensor | None = None  # the centred tokens J X: [G, B, n, d]
    seed: np.ndarray | None = None  # [G] each case's frontier seed


def _cell_cases(fcfg: dict, base_seed: int, n: int, n_seqs: int) -> _CellCases:
    """Stack the frontier's inputs of (n, B) over r* × seeds and factorise them once."""
    d = fcfg["d"]
    r_stars = list(fcfg["r_star"])
    per_seed = [frontier_inputs(base_seed, n, s, n_seqs, d) for s in fcfg["seeds"]]
    R = len(r_stars)
    X = torch.cat([x.expand(R, -1, -1, -1) for x, _, _ in per_seed])
    E = torch.cat([e.expand(R, -1, -1, -1) for _, e, _ in per_seed])
    V = torch.stack([v for _, _, v in per_seed for _ in r_stars])[:, None]  # [G, 1, d, d]
    A = torch.stack(
        [frontier_kernel(fcfg, base_seed, r, s) for s in fcfg["seeds"] for r in r_stars]
    )[:, None]  # [G, 1, d, d]
    r_star = np.array([r for _ in fcfg["seeds"] for r in r_stars])
    XAX = X @ A @ X.transpose(-1, -2)
    pinv = attention_native_pinv(X)
    cell = _CellCases(n, d, n_seqs, X, E, V, XAX, r_star, pinv, invertible=False)
    cell.seed = np.array([s for s in fcfg["seeds"] for _ in r_stars])
    if n <= d and n_seqs * n * (n - 1) >= d * d:
        cell.invertible = True
        cell.chol = torch.cat(
            [
                torch.linalg.cholesky(inversion_normal_matrix(x)).expand(R, -1, -1)
                for x, _, _ in per_seed
            ]
        )
        cell.Xp = token_pinv_exact(X)
        # P̂ = (clean + σE) X⁺ = clean X⁺ + σ E X⁺: the σ-free parts once per cell
        cell.NE = E @ cell.Xp
        cell.JX = centering(n, X.dtype) @ X
    return cell


def _invert_spectrum(cell: _CellCases, clean: torch.Tensor, clip: float) -> Callable:
    """P_invert's σ -> spectrum [G, d] on Y = clean + σE (clean X⁺ formed on first use)."""
    P0 = []

    def at(sigma):
        if not P0:
            P0.append(clean @ cell.Xp)
        P_hat = P0[0] if sigma == 0 else P0[0] + sigma * cell.NE
        A = operator_to_kernel(P_hat, cell.X, cell.chol, clip, log=True, JX=cell.JX)
        return torch.linalg.svdvals(A)

    return at


def _attn_spectrum(cell: _CellCases, clean: torch.Tensor) -> Callable:
    """P_attn's σ -> spectrum [G, d] on Y = clean + σE.

    C(σ) = Σ_b Z_b Z_bᵀ with Z = X̃⁺(clean + σE) = Z0 + σZE is quadratic in σ: the three Gram
    matrices are formed once (the σE part only if a σ > 0 is asked)."""
    grams = {}

    def at(sigma):
        if not grams:
            Z0 = cell.pinv @ clean
            grams["00"], grams["Z0"] = attention_native_gram(Z0, Z0), Z0
        if sigma == 0:
            return attention_native_eig(grams["00"])
        if "EE" not in grams:
            ZE = cell.pinv @ cell.E
            grams["0E"] = attention_native_gram(grams["Z0"], ZE)
            grams["EE"] = attention_native_gram(ZE, ZE)
        cross = grams["0E"] + grams["0E"].transpose(-1, -2)
        return attention_native_eig(grams["00"] + sigma * cross + sigma**2 * grams["EE"])

    return at


def _twin_spectrum(cell: _CellCases, clean: torch.Tensor, clip: float) -> Callable:
    """P_invert_linear's σ -> spectrum [G, d]. No log: Â(σ) = Â(clean) + σ Â(E) (least
    squares is linear in Y), two solves in all."""
    parts = []

    def at(sigma):
        if not parts:
            parts.extend(
                inversion_kernel(cell.X, Y, None, cell.chol, clip, log=False, Xp=cell.Xp)
                for Y in (clean, cell.E)
            )
        A0, AE = parts
        return torch.linalg.svdvals(A0 if sigma == 0 else A0 + sigma * AE)

    return at


def _curves_of_cell(
    fcfg: dict,
    base_seed: int,
    n: int,
    n_seqs: int,
    betas: list[float],
    estimator: str,
    tol: float,
    clip: float,
) -> Iterator[Curve]:
    """Every curve of one (n, B), the r* × seeds of the frontier stacked along G, made one at a
    time: a curve's clean output and σ-free parts ([G, B, n, d] each, 100 MB at B = 4096) are
    freed once the caller is done with it, not held for the whole cell."""
    cell = _cell_cases(fcfg, base_seed, n, n_seqs)
    d, base = cell.d, {"d": cell.d, "n": n, "n_seqs": n_seqs}

    def curve(key: dict, clean: torch.Tensor, spectrum_at: Callable) -> Curve:
        return Curve({**base, **key}, clean, cell.r_star, spectrum_at, estimator, tol, cell.seed)

    for cls in fcfg["classes"]:
        for beta in betas if cls == "L4" else [None]:
            MX = qk_operator(cls, cell.XAX, n, d, beta) @ cell.X
            for vm in fcfg["value_maps"]:
                clean = MX @ cell.V if vm == "unknown" else MX
                b = math.nan if beta is None else beta
                key = {"class": cls, "value_map": vm, "beta": b}
                yield curve({**key, "predictor": "P_attn"}, clean, _attn_spectrum(cell, clean))
                if cell.invertible and cls == "L4":
                    name = "P_invert" if vm == "known" else "P_invert_V=I"
                    yield curve(
                        {**key, "predictor": name}, clean, _invert_spectrum(cell, clean, clip)
                    )
            if cell.invertible and cls == "L4":
                # the softmax's logits, no softmax: L̂ = P̂ J is βXAXᵀJ/√d, no log needed
                twin = qk_logits("L4", cell.XAX, n, d, beta)[0] @ cell.X
                key = {"class": "L4lin", "value_map": "known", "beta": beta}
                yield curve(
                    {**key, "predictor": "P_invert_linear"}, twin, _twin_spectrum(cell, twin, clip)
                )


def boundaries_table(
    fcfg: dict,
    bcfg: dict,
    base_seed: int = 0,
    estimator: str = "energy_0.99",
    tol: float = DEFAULT_TOL,
    clip: float = DEFAULT_CLIP,
    progress=None,
) -> pd.DataFrame:
    """σ₅₀, σ₉₅ (absolute and relative to the clean output's std) of every curve.

    At the frontier's B (``fcfg["n_seqs"]``): the frontier's n that are in ``bcfg["n"]`` and
    every β. At the other budgets of ``bcfg["n_seqs"]``: the n and β of ``bcfg["budget_n"]``,
    ``bcfg["budget_beta"]``. ``progress(done, total)`` is called after each (B, n) cell.
    """
    args = (fcfg, bcfg, base_seed, estimator, tol, clip, progress)
    return _tables(*args, teachers=False)[0]


def boundaries_tables(
    fcfg: dict,
    bcfg: dict,
    base_seed: int = 0,
    estimator: str = "energy_0.99",
    tol: float = DEFAULT_TOL,
    clip: float = DEFAULT_CLIP,
    progress=None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """X1_boundaries (:func:`boundaries_table`, the same rows bitwise) and X1_teachers: σ_exact
    of every case of P_invert and P_invert_linear at the frontier's B (the n ≤ d cells of
    ``bcfg["n"]``, every β; columns ``teachers.TEACHER_COLUMNS``), scanned on the same σ grid with
    the same spectra, after each curve's σ₅₀ and σ₉₅ (whose evaluations it reuses)."""
    return _tables(fcfg, bcfg, base_seed, estimator, tol, clip, progress, teachers=True)


def _tables(fcfg, bcfg, base_seed, estimator, tol, clip, progress, teachers: bool):
    grid = log_grid(bcfg["sigma_min"], bcfg["sigma_max"], bcfg["per_decade"])
    rows, hints, per_case = [], {}, []
    cells = []
    for B in sorted({fcfg["n_seqs"], *bcfg["n_seqs"]}):
        main = B == fcfg["n_seqs"]
        ns = [n for n in fcfg["n"] if n in (bcfg["n"] if main else bcfg["budget_n"])]
        cells += [(B, main, n) for n in ns]
    report(progress, 0, len(cells))
    for done, (B, main, n) in enumerate(cells, 1):
        betas = fcfg["beta"] if main else [b for b in fcfg["beta"] if b in bcfg["budget_beta"]]
        # one (B, n) cell: its curves, searched from the smaller budget's answers
        for c in _curves_of_cell(fcfg, base_seed, n, B, betas, estimator, tol, clip):
            # the sweep reports σ50 only (σ95 at the frontier's B), each search started
            # from the same curve's answer at the next smaller budget (σ50 grows with B)
            key = tuple((k, str(v)) for k, v in c.key.items() if k != "n_seqs")
            row, found = c.boundaries(grid, QUANTILES if main else (0.5,), hints.get(key))
            hints[key] = found
            rows.append({**row, "frontier_budget": main})
            # after the row: its n_evals counts the bisections' evaluations alone
            if teachers and main and c.key["predictor"] in TEACHER_PREDICTORS:
                per_case += teacher_rows(c, grid)
        report(progress, done, len(cells))
    cases = teachers_frame(per_case)
    if not rows:  # the config asks for no curve (the large configs)
        return pd.DataFrame(columns=COLUMNS), cases
    out = pd.DataFrame(rows)
    order = ["predictor", "class", "value_map", "n", "beta", "n_seqs"]
    return out.sort_values(order, na_position="first").reset_index(drop=True)[COLUMNS], cases
