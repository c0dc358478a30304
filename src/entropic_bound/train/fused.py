"""The fused CPU training step (``_fused_step.c``): build once per machine, call through ctypes.

Torch runs an attention student's step as ~30 separate kernels over [students, batch, n, n]
tensors, each streaming megabytes through memory for 16 × 16 products. The C kernel instead
does a whole sequence's forward and backward pass in L1 cache (see the C file's header), one
student per thread. It is compiled with the system C compiler on first use (about two seconds)
into a per-machine cache; where no compiler works, ``train.backend: auto`` falls back to the
torch path and says so in the job log.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import NamedTuple

import torch

SOURCE = Path(__file__).with_name("_fused_step.c")
#: the environment variable naming the target of the build (GCC's -march), default "native";
#: e.g. ``x86-64-v3`` builds the AVX2 code path on an AVX-512 machine (the second code path
#: from which benchmarks/reference/tolerances.yaml was measured, docs/reproducibility.md)
MARCH_ENV = "ENTROPIC_BOUND_MARCH"
FLAGS = [
    "-O3",
    "-march=native",  # replaced by -march=$ENTROPIC_BOUND_MARCH when set (see march_flag)
    "-fopenmp",
    "-fPIC",
    "-shared",
    "-fno-math-errno",
    "-fno-trapping-math",
    # every a·b + c one FMA, whatever CPU the build tunes for (see the C file's "vector" note)
    "--param=avoid-fma-max-bits=0",
    "-std=gnu11",
]

_lib: ctypes.CDLL | None = None
_error: str | None = None


def cache_dir() -> Path:
    root = os.environ.get("ENTROPIC_BOUND_CACHE") or os.environ.get("XDG_CACHE_HOME")
    return Path(root or Path.home() / ".cache") / "entropic-bound"


def _cpuinfo() -> list[str]:
    """The distinct "model name" and "flags" lines of /proc/cpuinfo ([] where there is none)."""
    try:
        info = Path("/proc/cpuinfo").read_text()
    except OSError:
        return []
    return sorted({ln for ln in info.splitlines() if ln.startswith(("model name", "flags"))})


def _cpu_key() -> str:
    """-march=native code is only valid on the CPU it was built for: key the cache by it."""
    return "\n".join(_cpuinfo()) or platform.processor() + platform.machine()


def cpu_summary() -> str:
    """The CPU model and the kernel's vector width on it, for benchmark records (the kernel's
    speed depends on both: 16-float vectors with AVX-512, 8 with AVX2; see the C file)."""
    model, flags = platform.processor() or platform.machine(), set()
    for line in _cpuinfo():
        key, _, value = line.partition(":")
        if key.strip() == "model name":
            model = value.strip()
        else:
            flags = set(value.split())
    isa = next((f for f in ("avx512f", "avx2") if f in flags), "no avx2")
    if os.environ.get(MARCH_ENV, "").strip():  # a chosen target, not the CPU's own
        return f"{model}, kernel built with {march_flag()}"
    return f"{model}, {isa}: {16 if isa == 'avx512f' else 8}-float vectors"


def march_flag() -> str:
    """``-march=<target>``: native unless ``$ENTROPIC_BOUND_MARCH`` names another target."""
    target = os.environ.get(MARCH_ENV, "").strip() or "native"
    if not target.replace("-", "").replace("_", "").replace(".", "").isalnum():
        raise RuntimeError(f"${MARCH_ENV}={target!r} is not a -march target name")
    return f"-march={target}"


def build_flags(version: str) -> list[str]:
    """The compiler flags for a compiler whose ``--version`` printed ``version``."""
    # --param is GCC's; clang contracts a·b + c into FMAs without the Zen exception anyway
    flags = [f for f in FLAGS if "clang" not in version or not f.startswith("--param")]
    return [march_flag() if f == "-march=native" else f for f in flags]


def _build() -> ctypes.CDLL:
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        raise RuntimeError("no C compiler (cc/gcc) on PATH")
    version = subprocess.run([cc, "--version"], capture_output=True, text=True).stdout
    flags = build_flags(version)
    key = hashlib.sha256(
        "\0".join([SOURCE.read_text(), " ".join(flags), cc, version, _cpu_key()]).encode()
    ).hexdigest()[:16]
    target = cache_dir() / f"fused_step-{key}.so"
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        # build beside the target, then rename: concurrent jobs never load a half-written library
        fd, tmp = tempfile.mkstemp(suffix=".so", dir=target.parent)
        os.close(fd)
        try:
            res = subprocess.run(
                [cc, *flags, str(SOURCE), "-o", tmp], capture_output=True, text=True
            )
            if res.returncode:
                last = (res.stderr.strip().splitlines() or ["no message"])[-1]
                raise RuntimeError(f"{cc} failed to build {SOURCE.name}: {last}")
            os.replace(tmp, target)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    lib = ctypes.CDLL(str(target))
    lib.fused_step.restype = ctypes.c_int
    lib.fused_step.argtypes = (
        [ctypes.c_int] * 4
        + [ctypes.c_void_p] * 6
        + [ctypes.c_int] * 2
        + [ctypes.c_float]
        + [ctypes.c_void_p] * 5
        + [ctypes.c_int]
        + [ctypes.c_void_p] * 4
        + [ctypes.c_int]
    )
    lib.adam_step.restype = None
    lib.adam_step.argtypes = (
        [ctypes.c_int] * 2 + [ctypes.c_void_p] * 5 + [ctypes.c_float] * 5 + [ctypes.c_int]
    )
    return lib


def library() -> ctypes.CDLL:
    """The compiled kernel; raises RuntimeError (once per process) when it cannot be built."""
    global _lib, _error
    if _lib is None and _error is None:
        try:
            _lib = _build()
        except (RuntimeError, OSError) as exc:
            _error = str(exc)
    if _lib is None:
        raise RuntimeError(f"the fused CPU kernel is unavailable: {_error}")
    return _lib


def available() -> bool:
    try:
        library()
        return True
    except RuntimeError:
        return False


def _ptr(t: torch.Tensor | None) -> int | None:
    return None if t is None else t.data_ptr()


class Step(NamedTuple):
    """What :func:`fused_step` returns (None for what was not asked for)."""

    loss: torch.Tensor
    dA: torch.Tensor | None
    dbias: torch.Tensor | None
    dV: torch.Tensor | None
    dQa: torch.Tensor | None = None
    dKa: torch.Tensor | None = None


def fused_step(
    X: torch.Tensor,
    Y: torch.Tensor,
    rows: torch.Tensor,
    A: torch.Tensor | None,
    bias: torch.Tensor | None,
    V: torch.Tensor,
    softmax: bool,
    *,
    factors: tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None = None,
    backward: bool = True,
    threads: int | None = None,
) -> Step:
    """Loss and gradients of every student's minibatch MSE.

    X, Y: [R, n, d] float32 sequences; rows: [S, B] int64 indices into them; A: [S, d, d] or
    None; bias: [S, n, n] or None (one of the two is given); V: [S, d, d]. Returns
    ``loss [S]`` (float64: summed in double) and ``dA``, ``dbias`` (None where the input is
    None), ``dV``: the gradients of each student's own ``mean((act(bias + x A xᵀ) x V − y)²)``.
    With ``backward=False`` only the loss is computed (the gradients come back as None).

    ``factors = (rank [S], Qa, Ka: [S, d, c])``: students with rank > 0 take their bilinear term
    as A = Qa[:, :rank] Ka[:, :rank]ᵀ instead of A (cheaper for rank ≤ d/4; the result agrees
    with the dense A = Qa Kaᵀ to float32 rounding) and get ``dQa = dA Ka``, ``dKa = dAᵀ Qa``
    (columns ≥ rank zero) with their ``dA`` zero; needs A (the other students' terms).
    """
    lib = library()
    S, B, n, d = _check_shapes(X, Y, rows, A, bias, V)
    frank, Qa, Ka = _check_factors(factors, A, S, d)
    f32 = [
        t.detach().contiguous().float() if t is not None else None
        for t in (X, Y, A, bias, V, Qa, Ka)
    ]
    X, Y, A, bias, V, Qa, Ka = f32
    rows = rows.contiguous().to(torch.int64)
    if rows.numel() and (int(rows.min()) < 0 or int(rows.max()) >= X.shape[0]):
        raise ValueError("fused_step: row index out of range")
    out = _outputs(S, A, bias, V, Qa, Ka, backward, with_factors=factors is not None and backward)
    failed = lib.fused_step(
        S,
        B,
        n,
        d,
        *(_ptr(t) for t in (X, Y, rows, A, bias, V)),
        int(softmax),
        int(backward),
        2.0 / (B * n * d),
        *(_ptr(t) for t in (out.loss, out.dA, out.dbias, out.dV, frank)),
        Qa.shape[-1] if Qa is not None else 0,
        *(_ptr(t) for t in (Qa, Ka, out.dQa, out.dKa)),
        int(threads or torch.get_num_threads()),
    )
    if failed:
        raise MemoryError("fused_step: could not allocate its scratch memory")
    return out


def _check_shapes(X, Y, rows, A, bias, V) -> tuple[int, int, int, int]:
    """(S, B, n, d) of :func:`fused_step`'s arguments; ValueError where they disagree."""
    if rows.ndim != 2 or X.ndim != 3 or Y.shape != X.shape:
        raise ValueError(
            f"fused_step: rows must be [S, B] and X, Y equal [R, n, d]; got "
            f"{tuple(rows.shape)}, {tuple(X.shape)}, {tuple(Y.shape)}"
        )
    S, B = rows.shape
    n, d = X.shape[-2:]
    if A is None and bias is None:
        raise ValueError("fused_step needs A, bias or both")
    for name, t, shape in (("A", A, (S, d, d)), ("bias", bias, (S, n, n)), ("V", V, (S, d, d))):
        if t is not None and tuple(t.shape) != shape:
            raise ValueError(f"fused_step: {name} must have shape {shape}, got {tuple(t.shape)}")
    return S, B, n, d


def _check_factors(factors, A, S: int, d: int) -> tuple:
    """(rank as int32 [S], Qa, Ka) of ``factors``, checked, or three None without them."""
    if factors is None:
        return None, None, None
    frank, Qa, Ka = factors
    c = Qa.shape[-1]
    if A is None or frank.shape != (S,) or Ka.shape != Qa.shape:
        raise ValueError("fused_step: factors need A, rank [S] and Qa, Ka alike")
    if tuple(Qa.shape) != (S, d, c) or bool(((frank < 0) | (frank > c)).any()):
        raise ValueError(f"fused_step: Qa must be [{S}, {d}, c] and ranks in 0..c")
    return frank.contiguous().to(torch.int32), Qa, Ka


def _outputs(S: int, A, bias, V, Qa, Ka, backward: bool, with_factors: bool) -> Step:
    """The kernel's output buffers: the loss [S] (float64), and the gradients asked for."""
    loss = torch.empty(S, dtype=torch.float64)
    dA = torch.empty_like(A) if A is not None and backward else None
    dbias = torch.empty_like(bias) if bias is not None and backward else None
    dV = torch.empty_like(V) if backward else None
    dQa, dKa = (torch.empty_like(Qa), torch.empty_like(Ka)) if with_factors else (None, None)
    return Step(loss, dA, dbias, dV, dQa, dKa)


def adam_step(
    W: torch.Tensor,
    G: torch.Tensor,
    m1: torch.Tensor,
    m2: torch.Tensor,
    lr: torch.Tensor,
    b1: float,
    b2: float,
    c1: float,
    c2: float,
    eps: float,
    threads: int | None = None,
) -> None:
    """One Adam update of every row of W (a student each) in place, in one pass; ``lr: [S]``."""
    lib = library()
    arrays = (W, G, m1, m2)
    if any(t.dtype != torch.float32 or not t.is_contiguous() or t.shape != W.shape for t in arrays):
        raise ValueError("adam_step: W, G, m1, m2 must be contiguous float32 of one shape")
    lr = lr.contiguous().float()
    if W.ndim != 2 or lr.shape != (W.shape[0],):
        raise ValueError("adam_step: W must be [S, P] and lr [S]")
    lib.adam_step(
        W.shape[0],
        W.shape[1],
        *(_ptr(t) for t in arrays),
        _ptr(lr),
        b1,
        b2,
        c1,
        c2,
        eps,
        int(threads or torch.get_num_threads()),
    )


if __name__ == "__main__":  # python -m entropic_bound.train.fused: build and report
    try:
        library()
        print(f"fused kernel ready in {cache_dir()}")
    except RuntimeError as exc:
        sys.exit(f"entropic-bound: {exc}")
