"""Run a workflow script: log to the rule's log, one-line errors, thread count from the rule.

Knows nothing of Snakemake beyond the duck-typed ``snakemake`` object a script receives. The
scripts import ``workflow/scripts/eb_entry.py`` first, which opens the log (line-buffered)
before this library is imported, so that even an import error ends up in the rule's log.

A job ends with :func:`finish`, not with the interpreter's own shutdown: Arrow's native
thread pools (behind every parquet read) can abort the process while Python tears down, after
all the work is done and every output is written (``terminate called without an active
exception``, SIGABRT; apache/arrow#34314). That turned a finished job into a failed one once in
CI. Outputs are written atomically before ``main`` returns, so nothing is lost by skipping it.
"""

from __future__ import annotations

import os
import sys
import traceback

from entropic_bound.core.profiling import call_profiled, profile_request

#: libgomp's idle policy; read once, when the OpenMP runtime loads (with torch or the fused kernel)
WAIT_POLICY = "OMP_WAIT_POLICY"


def quiet_openmp(threads: int, environ=os.environ) -> bool:
    """Set ``OMP_WAIT_POLICY=PASSIVE`` for a job of more than one thread; True when it did.

    Must run before torch (or the fused kernel) loads the OpenMP runtime. A training job opens
    ~3,000 parallel regions; with the default policy libgomp's idle workers spin between them,
    and on a machine whose cores are busy with other jobs the spinning workers steal the time the
    working thread needs: 2 threads ran the L4 bench 4-9× slower than 1 (docs/performance.md).
    Passive workers sleep instead. A one-thread job has no workers, and a user's own setting
    is kept."""
    if threads <= 1 or environ.get(WAIT_POLICY):
        return False
    environ[WAIT_POLICY] = "PASSIVE"
    return True


#: glibc's mallopt parameters (malloc.h): M_TRIM_THRESHOLD and M_MMAP_THRESHOLD
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3


def retain_freed_memory(mb: int, libc=None) -> bool:
    """Keep freed blocks of up to ``mb`` MB in the process for reuse (the config's
    ``malloc_retain_mb``); True when set. 0, or a C library without glibc's ``mallopt``, leaves
    the allocator's defaults.

    glibc gives each block over 32 MB its own mapping and returns it to the kernel when freed,
    so a loop that allocates and frees a 64 MB tensor per step page-faults 64 MB of zeroed pages
    per step: 7-9 s of system time in the paper's frontier job (docs/performance.md). Raising the
    mmap and trim thresholds to ``mb`` serves such blocks from the heap again. Speed only: the
    arithmetic and the results are bitwise the same; peak memory grows (freed blocks are kept).
    Call before the work allocates (workflow/scripts/eb_entry.py does, before torch loads)."""
    if mb <= 0:
        return False
    if libc is None:
        import ctypes
        import ctypes.util

        name = ctypes.util.find_library("c")
        try:
            libc = ctypes.CDLL(name)
            libc.mallopt  # noqa: B018  musl and macOS have no mallopt: leave their defaults
        except (OSError, AttributeError, TypeError):
            return False
    size = int(mb) << 20
    return bool(libc.mallopt(_M_MMAP_THRESHOLD, size)) and bool(
        libc.mallopt(_M_TRIM_THRESHOLD, size)
    )


def finish(code: int) -> None:
    """Flush Python's streams and end the process with ``code`` without interpreter teardown."""
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):
            pass
    os._exit(code)


def open_log(sm):
    """The rule's log, line-buffered (a job killed by SLURM keeps every line), or stderr; the
    stream eb_entry.py already opened on it when there is one."""
    if not len(sm.log):
        return sys.stderr
    if getattr(sys.stderr, "name", None) == sm.log[0] and not sys.stderr.closed:
        return sys.stderr
    return open(sm.log[0], "w", buffering=1)


def run(main, sm, *, hard_exit: bool = True) -> None:
    """Call ``main(sm)`` with stderr sent to ``sm.log[0]``; a ValueError ends in one line.

    With ``hard_exit`` (the scripts' case) the process then ends through :func:`finish`: status 0
    when ``main`` returned, 1 when it raised. ``hard_exit=False`` returns or raises SystemExit."""
    code = 1
    try:
        _run(main, sm)
        code = 0
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 1
        if not hard_exit:
            raise
    if hard_exit:
        finish(code)


def _run(main, sm) -> None:
    log = open_log(sm)
    sys.stderr = log
    try:
        if "torch" in sys.modules:  # analysis and plotting jobs never import torch
            sys.modules["torch"].set_num_threads(max(1, int(getattr(sm, "threads", 1))))
        profile = profile_request(getattr(sm, "rule", None))  # EB_PROFILE (core/profiling.py)
        if profile is None:
            main(sm)
        else:
            call_profiled(main, sm, *profile)
    except (ValueError, OSError) as exc:  # a user-facing problem: one line, no traceback
        msg = f"entropic-bound: error in rule {getattr(sm, 'rule', '?')}: {exc}"
        print(msg, file=log)
        print(msg, file=sys.__stderr__)
        log.flush()
        sys.exit(1)
    except Exception:
        traceback.print_exc(file=log)
        print(
            f"entropic-bound: bug in rule {getattr(sm, 'rule', '?')}; traceback in {sm.log[0] if len(sm.log) else 'stderr'}",
            file=sys.__stderr__,
        )
        log.flush()
        sys.exit(1)
    finally:
        log.flush()
