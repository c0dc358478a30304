"""One workflow job profiled (benchmarks/profile_stage.py drives it): with ``EB_PROFILE`` set to a
path, :func:`entropic_bound.core.runner.run` calls the job's ``main`` under a profiler and writes
there, as JSON, where its time went: one row per function (cProfile, the default) or per torch
operator (``EB_PROFILER=torch``: torch's profiler, which sees each operator that a Python line
runs, where cProfile counts a ``@`` inside a function as that function's own time), with its
self time, cumulative time and calls (CPU seconds under cProfile; under torch's profiler its
operators' time), and the job's wall and CPU seconds. ``EB_PROFILE_RULE``,
when set, limits this to the jobs of one rule. Unset, nothing changes.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

PROFILE_ENV = "EB_PROFILE"
PROFILER_ENV = "EB_PROFILER"
PROFILE_RULE_ENV = "EB_PROFILE_RULE"
#: ``EB_PROFILER`` values
PROFILERS = ("cprofile", "torch")


def profile_request(rule: str | None, environ=os.environ) -> tuple[str, str] | None:
    """(output path, profiler) when the job of ``rule`` is to be profiled, else None. ValueError
    for an unknown profiler."""
    path = environ.get(PROFILE_ENV)
    wanted = environ.get(PROFILE_RULE_ENV)
    if not path or (wanted and wanted != rule):
        return None
    kind = environ.get(PROFILER_ENV) or PROFILERS[0]
    if kind not in PROFILERS:
        raise ValueError(f"{PROFILER_ENV}={kind!r}; use one of {', '.join(PROFILERS)}")
    return path, kind


def call_profiled(fn, arg, path, kind: str = "cprofile"):
    """``fn(arg)`` under the profiler ``kind``; its rows written to ``path`` (JSON) even when it
    raises. Returns what ``fn`` returns."""
    wall, cpu = time.perf_counter(), time.process_time()
    if kind == "torch":
        import torch

        prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU])
    else:
        import cProfile

        # CPU time, not wall: on a shared machine a job's wall time is mostly other jobs' work
        prof = cProfile.Profile(time.process_time)
    try:
        with prof:
            return fn(arg)
    finally:
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        rows = _torch_rows(prof) if kind == "torch" else _cprofile_rows(prof)
        out = {"profiler": kind, "wall_s": wall, "cpu_s": cpu, "rows": rows}
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(json.dumps(out) + "\n")


def _where(filename: str) -> str:
    """A source file as a reader finds it: from the package (or site-packages) on."""
    for marker in ("site-packages/", "src/", "workflow/"):
        if marker in filename:
            return filename.split(marker, 1)[1]
    return filename


def _cprofile_rows(prof) -> list[dict]:
    import pstats

    rows = []
    for (filename, line, name), (_, calls, tottime, cumtime, _) in pstats.Stats(prof).stats.items():
        label = name if filename == "~" else f"{name} ({_where(filename)}:{line})"
        rows.append({"function": label, "self_s": tottime, "cum_s": cumtime, "calls": calls})
    return sorted(rows, key=lambda r: -r["self_s"])


def _torch_rows(prof) -> list[dict]:
    rows = [
        {
            "function": e.key,
            "self_s": e.self_cpu_time_total / 1e6,
            "cum_s": e.cpu_time_total / 1e6,
            "calls": e.count,
        }
        for e in prof.key_averages()
    ]
    return sorted(rows, key=lambda r: -r["self_s"])
