"""Heartbeat lines for long jobs: stage, done/total, elapsed, ETA, at least every few seconds.

A background thread prints the current state every ``every`` seconds, so a job whose single
unit of work takes minutes still shows signs of life in its log; ``update(done, total)`` is the
progress callback the stage functions accept (``progress=``), called after each unit of work.
Printing never touches the computation, so results do not depend on it.

    with heartbeat("predict") as hb:
        data_only_predictions(cfg, paths, progress=hb.update)
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def heartbeat_line(stage: str, done: int, total: int, elapsed: float, note: str = "") -> str:
    """``[progress] predict: 3/12 (25%), elapsed 0:30, ETA 1:30``; ``?`` for a total not yet
    known (0) and for the ETA before the first unit is done; ``note`` is appended."""
    pct = f" ({100 * done / total:.0f}%)" if total else ""
    eta = _clock(elapsed / done * (total - done)) if done and total >= done else "?"
    line = f"[progress] {stage}: {done}/{total or '?'}{pct}, elapsed {_clock(elapsed)}, ETA {eta}"
    return f"{line}, {note}" if note else line


class Heartbeat:
    """Progress of one stage; see :func:`heartbeat` for the usual way to use it."""

    def __init__(self, stage: str, total: int = 0, every: float = 10.0, stream=None, clock=None):
        self.stage, self.total, self.every = stage, int(total), float(every)
        self.stream = stream
        self.clock = clock or time.monotonic
        self.done = 0
        self.note = ""
        self.start = self.clock()
        self.last = -float("inf")
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def line(self) -> str:
        return heartbeat_line(
            self.stage, self.done, self.total, self.clock() - self.start, self.note
        )

    def emit(self) -> None:
        with self._lock:
            stream = self.stream if self.stream is not None else sys.stderr
            print(self.line(), file=stream, flush=True)
            self.last = self.clock()

    def update(self, done: int, total: int | None = None, note: str | None = None) -> None:
        """``done`` of ``total`` units finished; prints when the last line is ``every`` s old."""
        self.done = int(done)
        if total is not None:
            self.total = int(total)
        if note is not None:
            self.note = note
        if self.clock() - self.last >= self.every:
            self.emit()

    def steps(self, step: int, max_steps: int, retired: int, students: int) -> None:
        """The training engine's callback (``progress(step, max_steps, retired, students)``):
        steps of the longest-running student, and how many students have stopped. When every
        student has stopped (converged or retired early) the job's training is done: 100 %."""
        done = max_steps if retired >= students else step
        self.update(done, max_steps, f"{retired}/{students} students stopped at step {step}")

    def _beat(self) -> None:
        while not self._stop.wait(self.every):
            self.emit()

    def start_thread(self) -> None:
        self._thread = threading.Thread(target=self._beat, name=f"heartbeat-{self.stage}")
        self._thread.daemon = True
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()


@contextlib.contextmanager
def heartbeat(stage: str, total: int = 0, every: float = 10.0, stream=None):
    """A :class:`Heartbeat` that prints on entry, every ``every`` seconds, and on success."""
    hb = Heartbeat(stage, total, every=every, stream=stream)
    hb.emit()
    hb.start_thread()
    try:
        yield hb
    finally:
        hb.stop()
    if not hb.total:  # no unit counts (a stage without a callback): it was one unit, now done
        hb.done = hb.total = 1
    hb.emit()  # the final line (done/total) only when the stage finished


def report(progress, done: int, total: int) -> None:
    """Call an optional progress callback ``progress(done, total)`` (``None``: nothing)."""
    if progress is not None:
        progress(done, total)
