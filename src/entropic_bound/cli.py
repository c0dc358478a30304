"""``entropic-bound``: the minimum attention rank of a user's own data, before any training.

``entropic-bound predict FILE`` reads sequences ``X`` and targets ``Y`` (``[B, n, d]``) and reports
every data-only predictor of SCIENCE.md §3 under every rank estimator of §2, the static-fit share,
where the data sit on the predictability frontier (n against d, a noise estimate, linear- or
softmax-like mixing) and one recommended minimum query-key rank with the predictor it trusts and
why. ``entropic-bound inspect FILE`` prints shapes, a task file's meta and summary statistics.

Scale (the 100,000 × 64 × 64 target: ≤ 10 s on 2 cores, ≤ 4 GB). Arrays are never loaded whole:
they are read in chunks of sequences straight from the ``.npy`` bytes (in place for ``.npy`` files
and uncompressed ``.npz`` members, streamed for compressed ones), so memory does not grow with B.
Every value is checked for NaN/Inf; the predictors then run on deterministic, seeded subsamples
whose sizes are reported:

* P_attn accumulates C = Σ_b Z_b Z_bᵀ chunk by chunk in float64 over at most
  ``--attn-max-sequences`` sequences (default: all while B·n·d·max(n, d) ≤ 2³², i.e. every
  sequence at d = 16, 16,384 of them at n = d = 64). Its d×d spectrum converges long before that.
* P_static's (nd × nd) least squares uses ``--static-oversample`` × nd sequences (default 8×), and
  is skipped, with a note, when nd or its d² × d² Van Loan–Pitsianis eigenproblem exceeds
  ``--static-max-size`` (default 1024): its cost grows as (nd)³ and d⁶ (n = d = 32 takes ~2 s,
  n = 16, d = 64 over a minute on 2 cores).
* P_invert (only with ``--value-known`` and n ≤ d) uses ``--invert-max-sequences`` (default 1024).

Errors are one line on stderr, ``entropic-bound: error: <what is wrong>; <what to do>``, exit 2.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import textwrap
import zipfile
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import torch

from .estimators import all_estimators, energy_tau, estimate, estimator_names
from .predictors import log_inversion_spectrum, predict_inversion, predict_static

PROG = "entropic-bound"
#: the paper's default estimator: r_E(0.99) is the least rank whose surrogate excess risk is
#: ≤ 1% (SCIENCE.md §1) and the estimator robust to softmax distortion (claim C8)
DEFAULT_ESTIMATOR = "energy_0.99"
#: static-fit share above which one static kernel explains the data (L0–L2 tasks sit at ≥ 0.995,
#: L3 at ~0.93, L4 and the interpolation rungs lower, in a check over the ladder at n, d ≤ 32)
STATIC_SHARE = 0.99
#: mean-token index at or above which the mixing looks softmax-like (see _mixing for the why)
SOFTMAX_INDEX = 1.5
#: relative noise (σ over the signal's rms) up to which P_attn stays exact at n ≥ 2d (claim C9)
NOISE_AT_SCALE = 0.1
#: elements per chunk read from disk (16 MB of float32): memory stays flat in B
CHUNK_ITEMS = 1 << 22
#: P_attn work budget: all sequences while B·n·d·max(n, d) stays below this (~3 s on 2 cores)
ATTN_WORK = 1 << 32
#: a P_attn spectrum whose largest ‖Z_b‖² exceeds this many times the mean is dominated by a few
#: ill-conditioned sequences (see AttnAccumulator.conditioning)
DOMINANCE = 50.0
#: the spectral-floor noise estimate needs tr((X̃ᵀX̃)⁻¹); a sample of this many sequences suffices
TRACE_SEQUENCES = 2048
#: width of the text report
WIDTH = 100
PLOT_SUFFIXES = {"png", "pdf", "svg", "svgz", "jpg", "jpeg", "eps", "ps", "tif", "tiff", "webp"}


class CliError(Exception):
    """A user error: ``what`` is wrong and ``todo`` says what to do about it."""

    def __init__(self, what: str, todo: str = ""):
        super().__init__(what)
        self.what, self.todo = what, todo

    def line(self) -> str:
        return f"{PROG}: error: {self.what}" + (f"; {self.todo}" if self.todo else "")


# --------------------------------------------------------------------------- reading arrays


@dataclass
class ArrayRef:
    """One array of a ``.npy`` file or ``.npz`` member, read in chunks of its first axis."""

    path: str
    name: str
    member: str | None = None  # zip member; None for a .npy file
    shape: tuple = ()
    dtype: np.dtype | None = None
    fortran: bool = False
    offset: int | None = None  # where the data start, when they can be read in place
    problem: str | None = None  # why the array cannot be read (reported only when it is used)

    @property
    def numeric(self) -> bool:
        return self.dtype is not None and self.dtype.kind in "biuf" and not self.dtype.fields

    def where(self) -> str:
        return f"{self.name} in {self.path}" if self.member is not None else self.path


def _read_header(fp, where: str) -> tuple[tuple, bool, np.dtype]:
    """Shape, Fortran order and dtype from a .npy header, public numpy API only."""
    try:
        version = np.lib.format.read_magic(fp)
        reader = (
            np.lib.format.read_array_header_1_0
            if version == (1, 0)
            else np.lib.format.read_array_header_2_0
        )  # 3.0 differs only in utf-8 names
        shape, fortran, dtype = reader(fp)
    except Exception as exc:  # numpy raises ValueError, EOFError, SyntaxError... on a bad header
        raise CliError(
            f"{where} is not a valid .npy array ({exc})",
            "save arrays with numpy.save or numpy.savez",
        ) from None
    return tuple(shape), bool(fortran), np.dtype(dtype)


def _file_kind(path: str) -> str:
    """'npz' or 'npy' by the file's first bytes (not its name)."""
    if not os.path.exists(path):
        raise CliError(f"file {path} does not exist", "check the path")
    if os.path.isdir(path):
        raise CliError(f"{path} is a directory", "give a .npz or .npy file")
    try:
        with open(path, "rb") as fh:
            head = fh.read(6)
    except OSError as exc:
        raise CliError(
            f"cannot read {path} ({exc.strerror or exc})", "check the file's permissions"
        ) from None
    if head.startswith(b"\x93NUMPY"):
        return "npy"
    if head[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        return "npz"
    raise CliError(
        f"{path} is not a .npz or .npy file" + (" (it is empty)" if not head else ""),
        "save X and Y with numpy.savez(FILE, X=X, Y=Y), or each with numpy.save",
    )


def open_arrays(path: str) -> tuple[str, dict[str, ArrayRef]]:
    """The arrays of a .npy or .npz file by name (``X.npy`` members are named ``X``)."""
    kind = _file_kind(path)
    if kind == "npy":
        with open(path, "rb") as fh:
            shape, fortran, dtype = _read_header(fh, path)
            offset = fh.tell()
        name = os.path.splitext(os.path.basename(path))[0]
        return kind, {name: ArrayRef(path, name, None, shape, dtype, fortran, offset)}
    try:
        zf = zipfile.ZipFile(path)
    except zipfile.BadZipFile as exc:
        raise CliError(
            f"{path} is not a readable .npz archive ({exc})", "re-save it with numpy.savez"
        ) from None
    refs: dict[str, ArrayRef] = {}
    with zf, open(path, "rb") as raw:
        for info in zf.infolist():
            if info.is_dir():
                continue
            name = info.filename[:-4] if info.filename.endswith(".npy") else info.filename
            ref = ArrayRef(path, name, info.filename)
            try:
                if info.flag_bits & 0x1:
                    raise CliError(f"{ref.where()} is encrypted", "save it without encryption")
                if info.compress_type == zipfile.ZIP_STORED:
                    # in place: skip the local header (30 bytes + its own name and extra field)
                    raw.seek(info.header_offset)
                    local = raw.read(30)
                    if len(local) < 30 or local[:4] != b"PK\x03\x04":
                        raise CliError(
                            f"{ref.where()} has a damaged zip header", "re-save the file"
                        )
                    raw.seek(
                        info.header_offset
                        + 30
                        + int.from_bytes(local[26:28], "little")
                        + int.from_bytes(local[28:30], "little")
                    )
                    ref.shape, ref.fortran, ref.dtype = _read_header(raw, ref.where())
                    ref.offset = raw.tell()
                else:
                    with zf.open(info) as fp:
                        ref.shape, ref.fortran, ref.dtype = _read_header(fp, ref.where())
            except CliError as exc:
                ref.problem = exc.what
            except (zipfile.BadZipFile, NotImplementedError, OSError, EOFError) as exc:
                ref.problem = f"{ref.where()} cannot be read ({exc})"
            refs[name] = ref
    return kind, refs


def _check_readable(ref: ArrayRef) -> None:
    if ref.problem:
        raise CliError(ref.problem, "re-save the file with numpy.savez")


def load_whole(ref: ArrayRef) -> np.ndarray:
    """The whole array (small or Fortran-ordered ones); never unpickles."""
    _check_readable(ref)
    try:
        if ref.member is None:
            return np.load(ref.path, mmap_mode="r" if ref.numeric else None, allow_pickle=False)
        with zipfile.ZipFile(ref.path) as zf, zf.open(ref.member) as fp:
            return np.lib.format.read_array(fp, allow_pickle=False)
    except ValueError as exc:
        raise CliError(
            f"{ref.where()} cannot be loaded ({exc})",
            "save plain numeric arrays (no Python objects)",
        ) from None


def iter_rows(ref: ArrayRef, rows: int):
    """Yield ``(start, block)`` over the first axis, ``rows`` at a time, without loading it all."""
    _check_readable(ref)
    B = ref.shape[0]
    per_row = math.prod(ref.shape[1:])
    row_bytes = per_row * ref.dtype.itemsize

    def blocks(fp):
        for start in range(0, B, rows):
            k = min(rows, B - start)
            buf = fp.read(k * row_bytes)
            if len(buf) < k * row_bytes:
                raise CliError(
                    f"{ref.where()} is truncated: it ends inside sequence "
                    f"{start + len(buf) // max(row_bytes, 1)} of {B}",
                    "re-create the file",
                )
            yield start, np.frombuffer(buf, ref.dtype).reshape((k,) + ref.shape[1:])

    if ref.fortran:  # rows are not contiguous on disk: read it whole (rare: numpy writes C order)
        arr = load_whole(ref)
        for start in range(0, B, rows):
            yield start, np.asarray(arr[start : start + rows])
    elif ref.offset is not None:
        with open(ref.path, "rb") as fh:
            fh.seek(ref.offset)
            yield from blocks(fh)
    else:
        with zipfile.ZipFile(ref.path) as zf, zf.open(ref.member) as fp:
            _read_header(fp, ref.where())
            yield from blocks(fp)


def _rows_per_chunk(shape: tuple) -> int:
    return max(1, CHUNK_ITEMS // max(1, math.prod(shape[1:])))


# --------------------------------------------------------------------------- predict: inputs


@dataclass
class Inputs:
    X: ArrayRef
    Y: ArrayRef
    source: str
    meta: dict | None = None


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


def _task_meta(refs: dict[str, ArrayRef]) -> dict | None:
    ref = refs.get("meta")
    if ref is None or ref.problem or ref.dtype is None or ref.dtype.kind not in "US":
        return None
    try:
        meta = json.loads(str(load_whole(ref)))
    except (CliError, ValueError):
        return None
    return meta if isinstance(meta, dict) else None


def resolve_inputs(args) -> Inputs:
    """X and Y from FILE (.npz) or from --x/--y (.npy), with the reason when they cannot be."""
    if args.file and (args.x or args.y):
        raise CliError("give either FILE or --x/--y, not both", "drop one of them")
    if not args.file and not (args.x or args.y):
        raise CliError(
            "no input given",
            "run `entropic-bound predict FILE.npz` (with X and Y) "
            "or `entropic-bound predict --x X.npy --y Y.npy`",
        )
    if args.x or args.y:
        if not (args.x and args.y):
            raise CliError(
                f"--{'y' if args.x else 'x'} is missing", "give both --x X.npy and --y Y.npy"
            )
        pair = []
        for flag, path in (("x", args.x), ("y", args.y)):
            kind, refs = open_arrays(path)
            if kind != "npy":
                raise CliError(
                    f"--{flag} {path} is a .npz archive, not a .npy file",
                    f"pass the archive as FILE: `entropic-bound predict {path}`",
                )
            ref = next(iter(refs.values()))
            ref.name = flag.upper()
            pair.append(ref)
        return Inputs(pair[0], pair[1], f"{args.x} + {args.y}")
    kind, refs = open_arrays(args.file)
    if kind == "npy":
        raise CliError(
            f"{args.file} is a single .npy array, but predict needs both X and Y",
            "pass them as --x X.npy --y Y.npy, or save both into one .npz",
        )
    if args.x_key or args.y_key:
        keys = (args.x_key or "X", args.y_key or "Y")
    elif args.split:
        keys = (f"X_{args.split}", f"Y_{args.split}")
    elif "X" in refs or "Y" in refs:
        keys = ("X", "Y")
    else:
        keys = ("X_train", "Y_train")
    missing = [k for k in keys if k not in refs]
    if missing:
        have = ", ".join(sorted(refs)) or "nothing"
        what = (
            " and ".join(missing) + (" arrays" if len(missing) > 1 else " array")
            if args.x_key or args.y_key or args.split or len(missing) < 2
            else "X and Y arrays (nor X_train and Y_train)"
        )
        raise CliError(
            f"{args.file} has no {what} (it holds: {have})",
            "save the inputs as X and the targets as Y of shape [B, n, d] "
            "(a task file's X_train/Y_train also work; --x-key/--y-key pick others)",
        )
    return Inputs(
        refs[keys[0]], refs[keys[1]], f"{args.file} [{keys[0]}, {keys[1]}]", _task_meta(refs)
    )


def validate_shapes(inp: Inputs) -> tuple[int, int, int]:
    for ref in (inp.X, inp.Y):
        _check_readable(ref)
        if not ref.numeric:
            raise CliError(
                f"{ref.where()} has dtype {ref.dtype}, not real numbers",
                "save X and Y as float32 or float64 arrays",
            )
    for ref in (inp.X, inp.Y):
        if len(ref.shape) != 3:
            raise CliError(
                f"{ref.where()} has {len(ref.shape)} dimensions (shape {ref.shape}), "
                "expected 3: [B sequences, n tokens, d dimensions]",
                "reshape it to [B, n, d] (one sequence is [1, n, d])",
            )
    if inp.X.shape != inp.Y.shape:
        raise CliError(
            f"X has shape {inp.X.shape} but Y has shape {inp.Y.shape}",
            "Y must hold one d-dimensional target per token: the same [B, n, d] as X",
        )
    B, n, d = inp.X.shape
    if B == 0 or d == 0:
        raise CliError(
            f"X and Y have shape {inp.X.shape}: no {'sequences' if B == 0 else 'dimensions'}",
            "give at least one sequence of tokens with d >= 1",
        )
    if n < 2:
        raise CliError(
            f"sequences have n = {n} token; attention mixes tokens, so every predictor "
            "needs n >= 2",
            "give sequences of at least 2 tokens",
        )
    return B, n, d


# --------------------------------------------------------------------------- predict: the pass


@dataclass
class Plan:
    """Which sequences each predictor sees (None: all)."""

    B: int
    n: int
    d: int
    attn: np.ndarray | None
    n_attn: int
    static: np.ndarray | None = None
    n_static: int = 0
    static_skip: str | None = None
    invert: np.ndarray | None = None
    n_invert: int = 0
    invert_skip: str | None = None


def _subsample(rng: np.random.Generator, B: int, m: int) -> np.ndarray | None:
    return None if m >= B else np.sort(rng.choice(B, size=m, replace=False))


def make_plan(args, B: int, n: int, d: int) -> Plan:
    rng = np.random.default_rng(args.seed)
    cap = args.attn_max_sequences
    if cap is None:
        cap = max(1024, ATTN_WORK // (n * d * max(n, d)))
    n_attn = B if cap == 0 else min(B, cap)
    plan = Plan(B, n, d, _subsample(rng, B, n_attn), n_attn)

    nd = n * d
    if args.no_static:
        plan.static_skip = "skipped (--no-static)"
    elif max(nd, d * d) > args.static_max_size:
        plan.static_skip = (
            f"skipped: its least squares has n*d = {nd} unknowns and its "
            f"Van Loan–Pitsianis eigenproblem is d² = {d * d} wide, beyond "
            f"--static-max-size {args.static_max_size} (cost grows as (nd)³ and d⁶); "
            "raise --static-max-size to run it"
        )
    elif B < nd:
        raise CliError(
            f"too few sequences for the least squares of P_static: it fits an "
            f"n*d = {nd}-dimensional linear map and needs at least {nd} sequences, got {B}",
            "supply more sequences, or pass --no-static to skip P_static and the static-fit share",
        )
    else:
        plan.n_static = min(B, args.static_oversample * nd)
        plan.static = _subsample(rng, B, plan.n_static)

    if not args.value_known:
        plan.invert_skip = "skipped: needs --value-known (the value map is the identity)"
    elif n > d:
        plan.invert_skip = f"skipped: needs n <= d to invert the tokens exactly (n = {n} > d = {d})"
    else:
        need = -(-d * d // (n * (n - 1)))
        if B < need:
            plan.invert_skip = (
                f"skipped: its least squares for A needs B·n·(n−1) >= d², i.e. at "
                f"least {need} sequences, got {B}"
            )
        else:
            plan.n_invert = min(B, max(args.invert_max_sequences, need))
            plan.invert = _subsample(rng, B, plan.n_invert)
    return plan


def _pick(idx: np.ndarray | None, start: int, stop: int) -> np.ndarray | slice:
    if idx is None:
        return slice(None)
    lo, hi = np.searchsorted(idx, [start, stop])
    return idx[lo:hi] - start


@dataclass
class AttnAccumulator:
    """P_attn's C = Σ_b Z_b Z_bᵀ (SCIENCE.md §3) and the diagnostics, summed over batches in float64.

    Z_b = X̃_b⁺ Y_b with X̃ = JX when n > d (centred) and X otherwise, through the Cholesky factor of
    the smaller Gram matrix: what predictors.predict_attention_native computes in one batch.
    """

    n: int
    d: int
    seen: int = 0
    C: torch.Tensor = None
    x2: float = 0.0  # Σ ‖X_b‖²
    y2: float = 0.0  # Σ ‖Y_b‖²
    ybar2: float = 0.0  # Σ ‖ȳ_b‖² (ȳ_b: the sequence's mean target token)
    ybar: torch.Tensor = None  # Σ ȳ_b
    xbar: torch.Tensor = None  # Σ x̄_b
    resid: float = 0.0  # Σ ‖J Y_b − J X_b Z_b‖² (n > d)
    trace: float = 0.0  # Σ tr((X̃ᵀX̃)⁻¹) over the first TRACE_SEQUENCES sequences
    traced: int = 0
    zmax: float = 0.0  # the largest ‖Z_b‖² and its sequence
    zmax_index: int = -1

    def __post_init__(self):
        self.C = torch.zeros(self.d, self.d, dtype=torch.float64)
        self.ybar = torch.zeros(self.d, dtype=torch.float64)
        self.xbar = torch.zeros(self.d, dtype=torch.float64)

    def merge(self, part: dict) -> None:
        zmax, zmax_index = part.pop("zmax"), part.pop("zmax_index")
        if zmax > self.zmax:
            self.zmax, self.zmax_index = zmax, zmax_index
        for key, value in part.items():
            setattr(self, key, getattr(self, key) + value)

    def conditioning(self) -> dict:
        """How much the single largest ‖Z_b‖² weighs in C (max over mean, and share).

        Near-singular token matrices (n close to d) amplify noise or softmax's non-linear part
        without bound (E[(X̃ᵀX̃)⁻¹] diverges at n = d), and then one sequence can hold most of C.
        Over L3/L4 tasks at n ∈ [d, 2d], max/mean stayed <= 25 wherever P_attn was right and
        reached 100–4000 when a few sequences' noise dominated: hence the flag at 50.
        """
        total = float(torch.trace(self.C))
        ratio = self.zmax * self.seen / total if total > 0 else 0.0
        return {
            "max_over_mean": ratio,
            "max_share": self.zmax / total if total > 0 else 0.0,
            "sequence": self.zmax_index,
            "dominated": ratio >= DOMINANCE,
        }

    def spectrum(self) -> np.ndarray:
        ev = torch.linalg.eigvalsh(self.C).flip(-1)
        return ev.clamp_min(0).sqrt().numpy()


def attn_partial(X: np.ndarray, Y: np.ndarray, index: np.ndarray, n_trace: int) -> dict:
    """AttnAccumulator's sums over one batch X, Y: [b, n, d] (float64) at file positions ``index``;
    tr((X̃ᵀX̃)⁻¹) over its first ``n_trace`` sequences."""
    X, Y = torch.from_numpy(X), torch.from_numpy(Y)
    b, n, d = X.shape
    x2 = float(torch.dot(X.flatten(), X.flatten()))
    y2 = float(torch.dot(Y.flatten(), Y.flatten()))
    if not (math.isfinite(x2) and math.isfinite(y2)):
        raise CliError(
            "X or Y holds values so large that their squares overflow float64",
            "rescale X and Y (e.g. to unit variance)",
        )
    xbar, ybar = X.mean(1), Y.mean(1)
    part = {
        "seen": b,
        "x2": x2,
        "y2": y2,
        "ybar2": float(torch.dot(ybar.flatten(), ybar.flatten())),
        "ybar": ybar.sum(0),
        "xbar": xbar.sum(0),
        "resid": 0.0,
        "trace": 0.0,
        "traced": 0,
    }
    if n >= d:
        Xt = X - xbar[:, None, :] if n > d else X  # X̃ = JX (formed, not XᵀX − n x̄x̄ᵀ: accuracy)
        G = Xt.mT @ Xt
        XY = Xt.mT @ Y  # X̃ᵀY = X̃ᵀJY as X̃ᵀJ = X̃ᵀ
    else:
        G = X @ X.mT
    L, info = torch.linalg.cholesky_ex(G)
    bad = torch.nonzero(info).flatten()
    if len(bad):
        what = "centred tokens J X" if n > d else "tokens"
        raise CliError(
            f"sequence {int(index[int(bad[0])])} has linearly dependent {what} (or "
            "values too small to tell apart), so P_attn cannot invert it",
            "drop degenerate sequences (repeated or constant tokens) or rescale X",
        )
    if n >= d:
        W = torch.linalg.solve_triangular(L, XY, upper=False)  # L⁻¹ X̃ᵀY
        Zt = torch.linalg.solve_triangular(L, W.mT, upper=False, left=False)  # Zᵀ = Wᵀ L⁻¹
        if n > d:  # residual of the per-sequence fit of JY on JX = the fit of Y on [1, X]
            jy2 = (Y * Y).sum((1, 2)) - n * (ybar * ybar).sum(1)
            part["resid"] = float((jy2 - (W * W).sum((1, 2))).clamp_min(0).sum())
    else:  # Z = Xᵀ(XXᵀ)⁻¹Y, so Zᵀ = Yᵀ L⁻ᵀ L⁻¹ X = (L⁻¹Y)ᵀ(L⁻¹X)
        Zt = torch.linalg.solve_triangular(L, Y, upper=False).mT @ torch.linalg.solve_triangular(
            L, X, upper=False
        )
    if not bool(torch.isfinite(Zt).all()):
        raise CliError("X or Y values overflow float64 arithmetic in P_attn", "rescale X and Y")
    if n_trace > 0:
        eye = torch.eye(L.shape[-1], dtype=L.dtype).expand(n_trace, -1, -1)
        Linv = torch.linalg.solve_triangular(L[:n_trace], eye, upper=False)
        part["trace"], part["traced"] = float((Linv * Linv).sum()), n_trace
    z2 = (Zt * Zt).sum((1, 2))
    top = int(torch.argmax(z2))
    part["zmax"], part["zmax_index"] = float(z2[top]), int(index[top])
    Zf = Zt.reshape(b * d, d)  # rows: the rows of every Zᵀ, i.e. the columns of every Z
    part["C"] = Zf.T @ Zf
    return part


def _check_finite(block: np.ndarray, name: str, start: int) -> None:
    if block.dtype.kind == "f" and not np.isfinite(block).all():
        bad = int(np.flatnonzero(~np.isfinite(block).reshape(len(block), -1).all(1))[0])
        raise CliError(
            f"{name} contains NaN or Inf (first in sequence {start + bad})",
            "remove or repair those sequences before predicting",
        )


class _SingleThreadedTorch:
    """Torch intra-op threads off while our own workers run: batched small factorisations split
    over OpenMP threads stall at every barrier once another process shares the cores (10x slower
    on a busy 2-core machine), while whole batches per worker thread scale and never stall."""

    def __enter__(self):
        self.threads = torch.get_num_threads()
        torch.set_num_threads(1)
        return self.threads

    def __exit__(self, *exc):
        torch.set_num_threads(self.threads)


def run_pass(inp: Inputs, plan: Plan) -> tuple[AttnAccumulator, tuple | None, tuple | None]:
    """One pass over the data: NaN/Inf check of every value, P_attn and the diagnostics on the
    attention subsample (batches of about CHUNK_ITEMS values on a pool of as many threads as torch
    would use, overlapping the reading), and the P_static / P_invert subsamples gathered for
    afterwards. Partial sums are merged in file order, so results do not depend on the timing."""
    acc = AttnAccumulator(plan.n, plan.d)
    rows = _rows_per_chunk(inp.X.shape)
    gathered = {"static": ([], []), "invert": ([], [])}
    want = {"static": plan.n_static > 0, "invert": plan.n_invert > 0}
    pending: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    futures: deque = deque()
    traced = 0

    with _SingleThreadedTorch() as workers, ThreadPoolExecutor(max(1, workers)) as pool:

        def flush(limit: int):
            nonlocal traced
            if pending:
                xs, ys, idx = (np.concatenate(v) for v in zip(*pending))
                pending.clear()
                n_trace = min(len(idx), TRACE_SEQUENCES - traced)
                traced += n_trace
                futures.append(pool.submit(attn_partial, xs, ys, idx, n_trace))
            while len(futures) > limit:  # bounded memory: at most `limit` batches in flight
                acc.merge(futures.popleft().result())

        try:
            for (start, xb), (_, yb) in zip(iter_rows(inp.X, rows), iter_rows(inp.Y, rows)):
                _check_finite(xb, "X", start)
                _check_finite(yb, "Y", start)
                stop = start + len(xb)
                sel = _pick(plan.attn, start, stop)
                pending.append(
                    (
                        np.array(xb[sel], dtype=np.float64),
                        np.array(yb[sel], dtype=np.float64),
                        np.arange(start, stop)[sel],
                    )
                )
                if sum(len(p[2]) for p in pending) >= max(1, rows // max(1, workers)):
                    flush(workers)
                for key, idx in (("static", plan.static), ("invert", plan.invert)):
                    if want[key]:
                        s = _pick(idx, start, stop)
                        gathered[key][0].append(np.array(xb[s], dtype=np.float64))
                        gathered[key][1].append(np.array(yb[s], dtype=np.float64))
            flush(0)
        finally:
            for f in futures:
                f.cancel()
    if not (torch.isfinite(acc.C).all() and math.isfinite(acc.y2) and math.isfinite(acc.x2)):
        raise CliError("X or Y values overflow float64 arithmetic", "rescale X and Y")
    out = [
        tuple(np.concatenate(v) for v in gathered[k]) if want[k] else None
        for k in ("static", "invert")
    ]
    return acc, out[0], out[1]


# --------------------------------------------------------------------------- predict: analysis


def _estimates(spectrum: np.ndarray, estimator: str) -> dict[str, float]:
    est = {k: float(v) for k, v in all_estimators(spectrum).items()}
    if estimator not in est:
        est[estimator] = float(estimate(spectrum, estimator))
    return est


def _round_rank(value: float) -> int:
    """Real-valued estimates are rounded, as the paper does for its exact-match rates."""
    return int(math.floor(value + 0.5))


def _mixing(acc: AttnAccumulator) -> dict:
    """Linear-attention-like or softmax-like, from the mean-token index.

    Why this statistic: a softmax row is a convex combination of the same n value tokens, so the
    outputs of one sequence share a common component (the attention-weighted mean token) and the
    per-sequence mean output ȳ_b carries far more than the 1/n share of the energy that uncorrelated
    tokens give. Linear attention (and any token-wise map, and noise) leaves the tokens nearly
    uncorrelated. So index = n · (share of the energy in the mean tokens) = n² Σ‖ȳ_b − μ‖² /
    Σ‖Y_b − 1μᵀ‖² (μ: the global mean token, so that a constant output bias does not count) is ≈ 1 for linear attention, rising towards n for uniform
    attention. Over the ladder at n ∈ {8..128}, d ∈ {16, 64}: L3 gave 0.93–1.04 (L0 < 0.5) at
    σ ≤ 0.1, softmax rungs 2.4–30 (L4 down to β = 8), hence the threshold 1.5. This beat the share
    of Y explained by a linear map of the token mean x̄_b, which peaked softmax (β ≥ 4) leaves
    near 1.5–2 because its mean output is not linear in x̄_b.
    """
    N, n = acc.seen, acc.n
    mu = acc.ybar / max(N, 1)
    num = acc.ybar2 - N * float(mu @ mu)
    den = acc.y2 - N * n * float(mu @ mu)
    if den <= 1e-12 * max(acc.y2, 1e-300):
        return {
            "label": "undetermined",
            "basis": "mean-token index",
            "mean_token_index": None,
            "threshold": SOFTMAX_INDEX,
            "explanation": "Y does not vary within sequences, so the mixing cannot be seen",
        }
    index = n * n * max(num, 0.0) / den
    label = "softmax-like" if index >= SOFTMAX_INDEX else "linear-like"
    return {
        "label": label,
        "basis": "mean-token index",
        "mean_token_index": index,
        "threshold": SOFTMAX_INDEX,
        "explanation": "n·(energy share of the per-sequence mean target token): ≈ 1 when tokens "
        "are mixed linearly or not at all, ≫ 1 when every output averages the "
        f"same tokens as softmax does; softmax-like from {SOFTMAX_INDEX}",
    }


def _static_residual(X: np.ndarray, Y: np.ndarray) -> tuple[float, int]:
    """Residual energy and degrees of freedom of P_static's least squares vec(Y) ~ K vec(X)."""
    B, n, d = X.shape
    x = torch.from_numpy(X).reshape(B, n * d)
    y = torch.from_numpy(Y).reshape(B, n * d)
    chol, info = torch.linalg.cholesky_ex(x.T @ x)
    if int(info) != 0:
        return 0.0, 0
    sxy = x.T @ y
    fit = float((sxy * torch.cholesky_solve(sxy, chol)).sum())
    return max(float((y * y).sum()) - fit, 0.0), n * d * (B - n * d)


def _noise(
    acc: AttnAccumulator,
    attn_spec: np.ndarray,
    attn_cut: int,
    trusted: str,
    softmax: bool,
    static_resid: tuple[float, int] | None,
) -> dict:
    """σ̂, the per-entry noise level of Y under the trusted predictor's model, and how.

    * P_static trusted: the residual of its least squares over its nd(B − nd) degrees of freedom.
    * n ≥ d + 2, "residual": Y_b = X_b Z_b exactly for linear attention, so what a per-sequence
      linear map of [1, X_b] cannot fit is noise: σ̂² = Σ‖JY − JX Z‖² / (B d (n − d − 1)),
      unbiased for linear attention, an upper bound otherwise (it also holds softmax's non-linear part).
    * n ≤ d + 1, "spectral floor": no residual is left, but noise adds σ² d Σ_b (X̃_bᵀX̃_b)⁻¹ to C,
      about σ² T per direction (T = Σ_b tr((X̃_bᵀX̃_b)⁻¹), computed from X); so
      σ̂² = (Σ_{k>r} λ_k) / ((d − r) T), a rough estimate that takes the spectrum beyond the cut r
      for noise.
    The relative level is σ̂ over the rms of the clean signal, the σ of SCIENCE.md at gain 1;
    ``share_of_attn_energy`` is the noise's expected share of the P_attn spectrum's energy, which
    decides whether an energy rank counts noise directions.
    """
    N, n, d = acc.seen, acc.n, acc.d
    power = acc.y2 / (N * n * d)
    out = {"sigma_hat": None, "relative": None, "method": None, "target_power": power}
    if trusted == "P_static" and static_resid and static_resid[1] > 0:
        out["method"] = "residual of P_static's least squares"
        var = static_resid[0] / static_resid[1]
    elif n >= d + 2:
        out["method"] = "residual of the per-sequence fit of Y on [1, X] (" + (
            "an upper bound: it also holds what linear attention cannot fit of softmax)"
            if softmax
            else "exact for linear attention)"
        )
        var = acc.resid / (N * d * (n - d - 1))
    elif attn_cut < d and acc.traced:
        out["method"] = (
            "spectral floor of P_attn beyond the cut (rough: n <= d + 1 leaves no residual)"
        )
        T = acc.trace * N / acc.traced
        var = float(np.sum(attn_spec[attn_cut:] ** 2)) / ((d - attn_cut) * T) if T > 0 else 0.0
    else:
        out["method"] = (
            "not estimable: n <= d + 1 leaves no per-sequence residual and the P_attn "
            "cut keeps every direction"
        )
        return out
    var = max(var, 0.0)
    out["sigma_hat"] = math.sqrt(var)
    clean = power - var
    out["relative"] = math.sqrt(var / clean) if clean > 0 else None
    total = float(np.sum(attn_spec**2))
    if trusted != "P_static" and acc.traced and total > 0:
        # the noise's expected energy in C, σ̂² d T, as a share of C's: what the energy rank must
        # leave out for the cut to land on the signal (heavy-tailed in T at n = d)
        out["share_of_attn_energy"] = min(1.0, var * d * (acc.trace * N / acc.traced) / total)
    return out


def _regime(n: int, d: int) -> str:
    if n < d:
        return (
            f"n = {n} < d = {d}: P_attn is not exact (each sequence shows the kernel only through "
            "X's n-dimensional row space); softmax data with a known identity value map: P_invert"
        )
    if n == d:
        return (
            f"n = d = {n}: P_attn is exact for linear attention at zero noise; softmax-like data "
            "need n > d for its centring; noise is amplified (E[(XᵀX)⁻¹] diverges at n = d)"
        )
    if n < 2 * d:
        return (
            f"d < n = {n} < 2d = {2 * d}: P_attn (centred) is exact for linear attention at zero "
            "noise and first-order for softmax; noise raises its floor below n = 2d"
        )
    return (
        f"n = {n} >= 2d = {2 * d} (at scale): P_attn is exact for linear attention and stays so "
        f"up to noise ≈ {NOISE_AT_SCALE} of the signal (claim C9); first-order for softmax"
    )


def _softmax_kernel(M: np.ndarray) -> bool:
    """Whether P_static's M̂ looks like a row-softmax: (almost) all entries positive and equal row
    sums (M̂ is known up to scale). A linear kernel U diag(s) Wᵀ has mixed signs and unequal sums;
    the token-mixing diagnostic cannot decide here, as a static linear M may mix tokens unevenly."""
    rows = M.sum(-1)
    mean = float(np.mean(rows))
    return bool(mean > 0 and np.mean(M > 0) >= 0.95 and np.std(rows) <= 0.05 * mean)


def choose_predictor(
    n: int, d: int, preds: dict, mixing: dict, value_known: bool
) -> tuple[str, str]:
    """(trusted predictor, case) by the paper's frontier (SCIENCE.md §3, claim C9)."""
    label = mixing["label"]
    share = preds["P_static"].get("static_fit_share")
    if share is not None and share >= STATIC_SHARE:
        return "P_static", "static"
    if label == "softmax-like" and value_known and n <= d and "spectrum" in preds["P_invert"]:
        return "P_invert", "invert"
    if label == "undetermined":
        return "P_attn", "undetermined"
    if label == "softmax-like":
        return "P_attn", "softmax" if n > d else "softmax_short"
    return "P_attn", "linear" if n >= d else "linear_short"


def recommend(
    n: int,
    d: int,
    preds: dict,
    name: str,
    case: str,
    noise: dict,
    conditioning: dict,
    estimator: str,
) -> dict:
    share = preds["P_static"].get("static_fit_share")
    if case == "static":
        confidence = "exact"
        why = (
            f"one static kernel explains the data (static-fit share {share:.4f} >= {STATIC_SHARE}): "
            "the mixing does not depend on the input, so the rank of that kernel ("
            + (
                "its log-inversion, as M̂ is positive with equal row sums like a softmax"
                if preds["P_static"]["softmax_kernel"]
                else "svd of M̂"
            )
            + ") is the bound; for a positional QK kernel P A Pᵀ it is the rank of A"
        )
    elif case == "invert":
        confidence = "exact at zero noise"
        why = (
            "the data look softmax-like, the value map is the identity (--value-known) and n <= d, "
            "where inverting the softmax recovers the logits X A Xᵀ/√d exactly without noise; the "
            "log amplifies noise on small probabilities (below 50% exact already at σ = 0.01 in "
            "the paper's frontier), so trust it only on clean data"
        )
    elif case == "linear":
        why = (
            "the data look linear-attention-like and n >= d, where Z_b = X̃_b⁺Y_b = A(X_bᵀX_b/n)V, "
            "so col(Σ_b Z_b Z_bᵀ) = col(A) exactly, whatever the value map"
        )
        eps = noise.get("share_of_attn_energy")
        tau = energy_tau(estimator)
        left_out = 1 - tau if tau is not None else 0.01
        if eps is None:
            confidence = "exact at zero noise"
            why += "; the noise level could not be estimated, and noise raises the spectrum's floor"
        elif eps <= left_out / 2:
            confidence = "exact"
        else:
            confidence = "approximate (noise)"
            why += (
                f"; but noise holds ≈ {eps:.1%} of P_attn's spectrum energy, more than the "
                f"{left_out:.0%} the cut may leave out, so the rank also counts noise directions "
                "and is an upper bound"
                + (
                    " (noise is amplified as n approaches d: sequences with n >= 2d fix it)"
                    if n < 2 * d
                    else ""
                )
            )
    elif case == "softmax":
        confidence = "first-order"
        why = (
            "the data look softmax-like and n > d: centring the tokens (J X) removes softmax's "
            "uniform part, so the spectrum is A's to first order in the attention scale β; "
            "sharper attention or noise spreads it, so energy ranks may over-count (compare the "
            "estimators above)"
        )
    elif case == "softmax_short":
        confidence = "low"
        why = (
            "no predictor is reliable here: softmax-like data need n > d for the centred P_attn, "
            "or, when the value map is the identity, --value-known with n <= d for P_invert; the "
            "P_attn number is for orientation only"
        )
    elif case == "linear_short":
        confidence = "low"
        why = (
            "P_attn is exact only when n >= d; with n < d each sequence shows the kernel only "
            "through X's row space, so longer sequences (n >= d) are needed for an exact answer"
        )
    else:
        confidence = "low"
        why = "Y has no token-dependent part that attention could produce: there is nothing to attend to"
    if name == "P_attn" and conditioning["dominated"] and case != "undetermined":
        confidence = "unreliable"
        why += (
            f"; but sequence {conditioning['sequence']} alone holds "
            f"{conditioning['max_share']:.0%} of P_attn's energy ({conditioning['max_over_mean']:.0f}"
            " times the mean): near-singular token matrices amplify noise or the non-linear part "
            "when n is close to d, so the spectrum reflects a few sequences; use sequences with "
            "n >= 2d, or drop ill-conditioned ones"
        )
    if (tau := energy_tau(estimator)) is not None:
        est_why = (
            f"{estimator} is the least k whose top-k singular values hold {tau:.0%} of the "
            "spectrum's energy: for the static surrogate exactly the least rank whose excess "
            f"risk is at most {1 - tau:.0%} (SCIENCE.md §1)"
            + (
                "; the paper's default, as the estimator robust to softmax distortion (claim C8)"
                if estimator == DEFAULT_ESTIMATOR
                else "; chosen with --estimator"
            )
        )
    else:
        est_why = f"{estimator} was chosen with --estimator (rounded to the nearest integer)"
    value = preds[name]["estimates"][estimator]
    return {
        "min_qk_rank": _round_rank(value),
        "value": value,
        "predictor": name,
        "estimator": estimator,
        "confidence": confidence,
        "why": why,
        "why_estimator": est_why,
    }


def predict(args) -> dict:
    if not (args.estimator.startswith("energy_") or args.estimator in estimator_names()):
        raise CliError(
            f"unknown estimator {args.estimator!r}",
            f"choose one of {', '.join(estimator_names())} (or energy_<tau>)",
        )
    try:
        estimate(np.ones(1), args.estimator)  # a bad energy_<tau> fails here, before any work
    except ValueError as exc:
        raise CliError(
            f"estimator {args.estimator!r} is not usable ({exc})",
            "give energy_<tau> with 0 < tau <= 1, e.g. energy_0.99",
        ) from None
    for flag in ("static_max_size", "static_oversample", "invert_max_sequences"):
        if getattr(args, flag) < 1:
            raise CliError(f"--{flag.replace('_', '-')} must be >= 1", "give a positive number")
    if args.attn_max_sequences is not None and args.attn_max_sequences < 0:
        raise CliError("--attn-max-sequences must be >= 0", "give 0 for all sequences")
    if args.plot:
        _check_plot_path(args.plot)

    inp = resolve_inputs(args)
    B, n, d = validate_shapes(inp)
    plan = make_plan(args, B, n, d)
    acc, static_data, invert_data = run_pass(inp, plan)
    mixing = _mixing(acc)
    softmax = mixing["label"] == "softmax-like"
    notes = []

    attn_spec = acc.spectrum()
    preds = {
        "P_attn": {
            "status": "ok",
            "sequences_used": plan.n_attn,
            "centred": n > d,
            "spectrum_kind": "sqrt(eig(sum_b Z_b Z_b^T)), Z_b = pinv("
            + ("J X_b" if n > d else "X_b")
            + ") Y_b",
            "spectrum": attn_spec.tolist(),
            "estimates": _estimates(attn_spec, args.estimator),
        }
    }
    if plan.n_attn < B:
        notes.append(
            f"P_attn and the diagnostics used a seeded subsample (seed {args.seed}) of "
            f"{plan.n_attn} of {B} sequences (--attn-max-sequences; 0 uses all)"
        )

    if static_data is not None:
        try:
            st = predict_static(*static_data)
        except ValueError as exc:
            raise CliError(str(exc), "or pass --no-static to skip P_static") from None
        softmax_kernel = _softmax_kernel(st["M_hat"])
        spec = (
            log_inversion_spectrum(torch.as_tensor(st["M_hat"])).numpy()
            if softmax_kernel
            else np.asarray(st["spectrum"])
        )
        preds["P_static"] = {
            "status": "ok",
            "sequences_used": plan.n_static,
            "static_fit_share": float(st["static_fit_share"]),
            "softmax_kernel": softmax_kernel,
            "spectrum_kind": (
                "log-inversion of M_hat (positive, equal row sums: a softmax)"
                if softmax_kernel
                else "svd(M_hat)"
            ),
            "spectrum": spec.tolist(),
            "estimates": _estimates(spec, args.estimator),
        }
        if plan.n_static < B:
            notes.append(
                f"P_static used a seeded subsample of {plan.n_static} of {B} sequences "
                f"({args.static_oversample} × n·d; --static-oversample)"
            )
    else:
        preds["P_static"] = {"status": plan.static_skip, "static_fit_share": None}

    if invert_data is not None:
        try:
            inv = predict_inversion(*invert_data)
        except ValueError as exc:
            raise CliError(str(exc), "or drop --value-known") from None
        spec = np.asarray(inv["spectrum"])
        preds["P_invert"] = {
            "status": "ok",
            "sequences_used": plan.n_invert,
            "spectrum_kind": "svd(A_hat), log-inversion with V = I",
            "spectrum": spec.tolist(),
            "estimates": _estimates(spec, args.estimator),
        }
        if plan.n_invert < B:
            notes.append(
                f"P_invert used a seeded subsample of {plan.n_invert} of {B} sequences "
                "(--invert-max-sequences)"
            )
    else:
        preds["P_invert"] = {"status": plan.invert_skip}

    name, case = choose_predictor(n, d, preds, mixing, args.value_known)
    if name == "P_static":  # a static kernel shows its form directly; the token diagnostic need not
        mixing["label"] = "softmax-like" if preds["P_static"]["softmax_kernel"] else "linear-like"
        mixing["basis"] = "P_static's kernel M̂ (softmax: positive with equal row sums)"
    attn_cut = _round_rank(preds["P_attn"]["estimates"][args.estimator])
    static_resid = _static_residual(*static_data) if name == "P_static" else None
    noise = _noise(acc, attn_spec, attn_cut, name, softmax, static_resid)
    conditioning = acc.conditioning()
    rec = recommend(n, d, preds, name, case, noise, conditioning, args.estimator)
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
            f"{x_rms:.3g}); the predictors and the mixing diagnostic assume roughly centred "
            "inputs"
        )
    if name != "P_static" and preds["P_static"].get("static_fit_share") is not None:
        notes.append(
            f"P_static is not trusted: its static-fit share is below {STATIC_SHARE}, so the "
            "mixing depends on the input (query-key attention)"
        )

    result = {
        "input": {
            "source": inp.source,
            "B": B,
            "n": n,
            "d": d,
            "dtype": [str(inp.X.dtype), str(inp.Y.dtype)],
            "task_meta": (
                {k: inp.meta[k] for k in TASK_META_KEYS if k in inp.meta} if inp.meta else None
            ),
        },
        "settings": {
            "estimator": args.estimator,
            "value_known": args.value_known,
            "seed": args.seed,
            "attn_max_sequences": args.attn_max_sequences,
            "no_static": args.no_static,
            "static_max_size": args.static_max_size,
            "static_oversample": args.static_oversample,
            "invert_max_sequences": args.invert_max_sequences,
        },
        "predictors": preds,
        "static_fit_share": preds["P_static"].get("static_fit_share"),
        "frontier": {
            "n": n,
            "d": d,
            "regime": _regime(n, d),
            "noise": noise,
            "mixing": mixing,
            "conditioning": conditioning,
        },
        "recommendation": rec,
        "notes": notes,
    }
    if args.plot:
        plot_spectrum(args.plot, preds, rec)
        result["plot"] = args.plot
    return result


# --------------------------------------------------------------------------- output


def _fmt(value: float | None, name: str = "") -> str:
    if value is None:
        return "-"
    if name == "numerical" or name.startswith("energy_"):
        return f"{value:.0f}"
    return f"{value:.2f}"


def _wrap(head: str, text: str, indent: int = 4) -> str:
    return textwrap.fill(
        text,
        width=WIDTH,
        initial_indent=head,
        subsequent_indent=" " * indent,
        break_on_hyphens=False,
    )


def format_predict(res: dict) -> str:
    inp, fr, rec = res["input"], res["frontier"], res["recommendation"]
    lines = [
        f"{PROG} predict: {inp['source']}",
        f"  B = {inp['B']} sequences, n = {inp['n']} tokens, d = {inp['d']} dimensions",
    ]
    if inp["task_meta"]:
        m = inp["task_meta"]
        lines.append(
            "  file meta: "
            + ", ".join(
                f"{k} = {m[k]}"
                for k in ("task_id", "rung", "r_star", "beta", "sigma", "value_map")
                if k in m
            )
            + "  (for comparison)"
        )
    names = list(res["predictors"]["P_attn"]["estimates"])
    lines += ["", "Rank estimates (predictor × estimator):"]
    lines.append(
        f"  {'predictor':<9} {'sequences':>9}  "
        + "  ".join(f"{n:>{max(len(n), 5)}}" for n in names)
    )
    for pname, p in res["predictors"].items():
        if p.get("status") == "ok":
            cells = "  ".join(f"{_fmt(p['estimates'][n], n):>{max(len(n), 5)}}" for n in names)
            lines.append(f"  {pname:<9} {p['sequences_used']:>9}  {cells}")
        else:
            lines.append(_wrap(f"  {pname:<9} ", p["status"], 12))
    share = res["static_fit_share"]
    lines += [
        "",
        "Static-fit share: "
        + (
            f"{share:.4f} (1 = one static kernel explains the data)"
            if share is not None
            else "not computed (P_static skipped)"
        ),
    ]
    noise, mix, cond = fr["noise"], fr["mixing"], fr["conditioning"]
    lines += [
        "",
        "Where the data sit on the predictability frontier:",
        _wrap("  n vs d: ", fr["regime"]),
    ]
    if noise["sigma_hat"] is None:
        lines.append(_wrap("  noise:  ", noise["method"]))
    else:
        rel = f"{noise['relative']:.3g}" if noise["relative"] is not None else "n/a"
        lines.append(
            _wrap(
                "  noise:  ",
                f"sigma_hat = {noise['sigma_hat']:.3g} per entry ({rel} of "
                f"the signal rms), by the {noise['method']}",
            )
        )
    idx = mix["mean_token_index"]
    if mix["basis"] != "mean-token index":
        lines.append(_wrap("  mixing: ", f"{mix['label']}, from {mix['basis']}"))
    elif idx is None:
        lines.append(_wrap("  mixing: ", f"{mix['label']} ({mix['explanation']})"))
    else:
        lines.append(
            _wrap(
                "  mixing: ",
                f"{mix['label']} (mean-token index {idx:.2f}: ≈ 1 for linear "
                "attention or token-wise maps, ≫ 1 when outputs average the same tokens as "
                f"softmax does; softmax-like from {mix['threshold']})",
            )
        )
    lines.append(
        _wrap(
            "  conditioning: ",
            f"the largest sequence ({cond['sequence']}) holds "
            f"{cond['max_share']:.2%} of P_attn's energy, {cond['max_over_mean']:.1f} × the "
            "mean"
            + (
                f", dominated (>= {DOMINANCE:g} ×)"
                if cond["dominated"]
                else f" (flagged from {DOMINANCE:g} ×)"
            ),
        )
    )
    lines += [
        "",
        f"Recommended minimum QK rank: {rec['min_qk_rank']}",
        _wrap(
            "  trusted: ",
            f"{rec['predictor']} with {rec['estimator']} (confidence: "
            f"{rec['confidence']}); energy beyond the cut: {rec['tail_energy']:.2%}",
        ),
        _wrap("  why: ", rec["why"] + "."),
        _wrap("  estimator: ", rec["why_estimator"] + "."),
    ]
    if res["notes"]:
        lines += ["", "Notes:"] + [_wrap("  - ", note) for note in res["notes"]]
    if res.get("plot"):
        lines += ["", f"spectrum plot written to {res['plot']}"]
    return "\n".join(lines)


def _check_plot_path(path: str) -> None:
    suffix = os.path.splitext(path)[1].lower().lstrip(".")
    if suffix not in PLOT_SUFFIXES:
        raise CliError(
            f"--plot {path}: unknown image type {suffix or '(none)'!r}",
            f"end the name with one of .{', .'.join(sorted(PLOT_SUFFIXES))}",
        )
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise CliError(f"--plot {path}: folder {folder} does not exist", "create it first")


def plot_spectrum(path: str, preds: dict, rec: dict) -> None:
    """Normalised spectra of every predictor that ran, the trusted one bold, the cut marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    trusted = rec["predictor"]
    for name, p in preds.items():
        if p.get("status") != "ok":
            continue
        s = np.asarray(p["spectrum"], dtype=float)
        k = np.arange(1, len(s) + 1)
        top = s[0] if len(s) and s[0] > 0 else 1.0
        ax.plot(
            k,
            np.maximum(s / top, 1e-16),
            marker="o",
            ms=3,
            lw=2.5 if name == trusted else 1,
            alpha=1 if name == trusted else 0.5,
            label=name + (" (trusted)" if name == trusted else ""),
        )
        if name == trusted:
            e = np.cumsum(s**2) / max(np.sum(s**2), 1e-300)
            ax2.plot(k, e, marker="o", ms=3, color="C0", label=f"{name}: cumulative energy")
    r = rec["min_qk_rank"]
    for a in (ax, ax2):
        a.axvline(r + 0.5, color="k", ls="--", lw=1, label=f"cut: rank {r} ({rec['estimator']})")
        a.set_xlabel("index k (singular value rank)")
    if (tau := energy_tau(rec["estimator"])) is not None:
        ax2.axhline(tau, color="gray", ls=":", lw=1, label=f"τ = {tau:g}")
    ax.set_yscale("log")
    ax.set_ylabel(r"singular value $s_k / s_1$")
    ax2.set_ylabel(r"cumulative energy $\Sigma_{i \leq k}\, s_i^2 \;/\; \Sigma_i\, s_i^2$")
    ax.set_title("Predicted kernel spectra")
    ax2.set_title(f"Recommended minimum QK rank: {r}")
    ax.legend(fontsize=8)
    ax2.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    try:
        fig.savefig(path, dpi=120)
    finally:
        plt.close(fig)


# --------------------------------------------------------------------------- inspect


def _stats(ref: ArrayRef) -> dict:
    """mean, std, min, max over the finite entries, and NaN/Inf counts, chunk by chunk (chunks
    merged by Chan et al.'s pairwise update, so a large mean costs no precision)."""
    count = nan = inf = 0
    mean = m2 = 0.0
    lo, hi = math.inf, -math.inf
    blocks = iter_rows(ref, _rows_per_chunk(ref.shape)) if ref.shape else [(0, load_whole(ref))]
    with np.errstate(over="ignore", invalid="ignore"):  # huge values give inf, reported as such
        for _, block in blocks:
            a = np.asarray(block, dtype=np.float64).ravel()
            if ref.dtype.kind == "f":
                finite = np.isfinite(a)
                nan += int(np.isnan(a).sum())
                inf += int(np.isinf(a).sum())
                a = a[finite]
            if a.size:
                m = float(np.mean(a))
                dev = a - m
                k, total = a.size, count + a.size
                delta = m - mean
                m2 += float(np.dot(dev, dev)) + delta * delta * count * k / total
                mean += delta * k / total
                count = total
                lo, hi = min(lo, float(a.min())), max(hi, float(a.max()))
    if not count:
        return {"mean": None, "std": None, "min": None, "max": None, "nan": nan, "inf": inf}
    return {
        "mean": mean,
        "std": math.sqrt(m2 / count) if math.isfinite(m2) else math.inf,
        "min": lo,
        "max": hi,
        "nan": nan,
        "inf": inf,
    }


def inspect_file(args) -> dict:
    kind, refs = open_arrays(args.file)
    arrays, meta = [], None
    for name, ref in refs.items():
        row = {
            "name": name,
            "shape": list(ref.shape),
            "dtype": str(ref.dtype) if ref.dtype else None,
        }
        if ref.problem:
            row["problem"] = ref.problem
        elif ref.numeric:
            row.update(_stats(ref))
        elif ref.dtype.kind in "US" and math.prod(ref.shape) <= 1:
            text = str(load_whole(ref))
            if name == "meta":
                try:
                    meta = json.loads(text)
                    row["note"] = "JSON, shown below"
                except ValueError:
                    row["value"] = text[:200]
            else:
                row["value"] = text[:200]
        else:
            row["note"] = "not numeric; statistics skipped"
        arrays.append(row)
    if not arrays:
        raise CliError(f"{args.file} holds no arrays", "save arrays into it with numpy.savez")
    return {
        "file": args.file,
        "kind": kind,
        "bytes": os.path.getsize(args.file),
        "arrays": arrays,
        "meta": meta,
    }


def format_inspect(res: dict) -> str:
    lines = [
        f"{res['file']}: {res['kind']} file, {res['bytes'] / 1e6:.1f} MB, "
        f"{len(res['arrays'])} array{'s' if len(res['arrays']) != 1 else ''}",
        "",
    ]
    lines.append(
        f"  {'array':<12} {'shape':<18} {'dtype':<9} {'mean':>10} {'std':>10} "
        f"{'min':>10} {'max':>10} {'NaN':>5} {'Inf':>5}"
    )
    for a in res["arrays"]:
        shape = str(tuple(a["shape"]))
        head = f"  {a['name']:<12} {shape:<18} {str(a['dtype']):<9}"
        if "problem" in a:
            lines.append(f"{head} unreadable: {a['problem']}")
        elif "mean" in a:
            nums = " ".join(
                f"{v:>10.4g}" if v is not None else f"{'-':>10}"
                for v in (a["mean"], a["std"], a["min"], a["max"])
            )
            lines.append(f"{head} {nums} {a['nan']:>5} {a['inf']:>5}")
        elif "value" in a:
            lines.append(f"{head} {a['value']!r}")
        else:
            lines.append(f"{head} {a.get('note', '')}")
    if res["meta"] is not None:
        lines += ["", "meta:"] + [
            "  " + ln for ln in json.dumps(res["meta"], indent=2).splitlines()
        ]
    return "\n".join(lines)


# --------------------------------------------------------------------------- entry point


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse's own usage errors: one line and exit 2, as ours
        self.exit(2, f"{PROG}: error: {message}; see `{self.prog} --help`\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG,
        description="Data-only query-key rank prediction "
        "(The Entropic Bound for Transformers, arXiv 2607.23050).",
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    p = sub.add_parser(
        "predict",
        help="the minimum attention rank of X, Y before any training",
        description="Report every data-only predictor × estimator, the static-fit "
        "share, the data's place on the predictability frontier and one recommended "
        "minimum query-key rank.",
    )
    p.add_argument(
        "file", nargs="?", help=".npz with X and Y [B, n, d] (or a task file's X_train/Y_train)"
    )
    p.add_argument("--x", help="X as a .npy file [B, n, d] (with --y)")
    p.add_argument("--y", help="Y as a .npy file [B, n, d] (with --x)")
    p.add_argument("--x-key", help="name of X in the .npz (default X, else X_train)")
    p.add_argument("--y-key", help="name of Y in the .npz (default Y, else Y_train)")
    p.add_argument(
        "--split", choices=("train", "test"), help="use a task file's X_<split>/Y_<split>"
    )
    p.add_argument("--json", action="store_true", help="print one machine-readable JSON object")
    p.add_argument(
        "--plot", metavar="PNG", help="draw the spectra with the chosen cut to this file"
    )
    p.add_argument(
        "--value-known",
        action="store_true",
        help="the value map is the identity (V = I): enables P_invert when n <= d",
    )
    p.add_argument(
        "--estimator",
        default=DEFAULT_ESTIMATOR,
        help=f"estimator of the recommendation (default {DEFAULT_ESTIMATOR}; one of "
        f"{', '.join(estimator_names())} or energy_<tau>)",
    )
    p.add_argument(
        "--no-static", action="store_true", help="skip P_static (and the static-fit share)"
    )
    p.add_argument(
        "--static-max-size",
        type=int,
        default=1024,
        help="run P_static only when n*d and d*d are at most this (default 1024)",
    )
    p.add_argument(
        "--static-oversample",
        type=int,
        default=8,
        help="P_static uses this many × n*d sequences at most (default 8)",
    )
    p.add_argument(
        "--attn-max-sequences",
        type=int,
        default=None,
        help="P_attn uses at most this many sequences (0: all; default: all while "
        "B*n*d*max(n,d) <= 2^32, e.g. 16384 at n = d = 64)",
    )
    p.add_argument(
        "--invert-max-sequences",
        type=int,
        default=1024,
        help="P_invert uses at most this many sequences (default 1024)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the subsamples (default 0)")
    p.add_argument("--traceback", action="store_true", help=argparse.SUPPRESS)
    q = sub.add_parser("inspect", help="shapes, task meta and summary statistics of a file")
    q.add_argument("file", help=".npz or .npy file")
    q.add_argument("--json", action="store_true", help="print one machine-readable JSON object")
    q.add_argument("--traceback", action="store_true", help=argparse.SUPPRESS)
    return parser


def _jsonable(obj):
    """NaN/Inf become null so that the output is strict JSON."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.generic):
        return _jsonable(obj.item())
    return obj


def main(argv=None) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # --help (0) or a usage error (2, its line already printed)
        return exc.code if isinstance(exc.code, int) else 0
    try:
        res = predict(args) if args.command == "predict" else inspect_file(args)
        text = (
            json.dumps(_jsonable(res), indent=2, ensure_ascii=False)
            if args.json
            else format_predict(res)
            if args.command == "predict"
            else format_inspect(res)
        )
        print(text)
        return 0
    except Exception as exc:  # noqa: BLE001 - every user error becomes one line, never a traceback
        if getattr(args, "traceback", False):
            raise
        if isinstance(exc, BrokenPipeError):
            return 0
        print(_error_line(exc), file=sys.stderr)
        return 2


def _error_line(exc: Exception) -> str:
    if isinstance(exc, CliError):
        return exc.line()
    if isinstance(exc, ValueError):  # the library's messages already name the problem and the fix
        return f"{PROG}: error: {exc}"
    if isinstance(exc, (zipfile.BadZipFile, EOFError)):
        return f"{PROG}: error: the file is damaged or truncated ({exc}); re-create it"
    if isinstance(exc, MemoryError):
        return (
            f"{PROG}: error: out of memory; lower --attn-max-sequences, --static-oversample "
            "or --invert-max-sequences"
        )
    if isinstance(exc, OSError):
        where = f" {exc.filename}" if exc.filename else ""
        return f"{PROG}: error: cannot read or write{where} ({exc.strerror or exc}); check the path and permissions"
    if isinstance(exc, torch.linalg.LinAlgError):
        return (
            f"{PROG}: error: the data are numerically degenerate ({str(exc).splitlines()[0]}); "
            "check for constant or duplicated tokens and rescale X and Y"
        )
    return (
        f"{PROG}: error: internal error {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        "; please report it with the command (rerun with --traceback for details)"
    )


if __name__ == "__main__":
    sys.exit(main())
