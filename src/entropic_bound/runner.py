"""Run a workflow script: log to the rule's log, one-line errors, thread count from the rule.

Knows nothing of Snakemake beyond the duck-typed ``snakemake`` object a script receives. The
scripts import ``workflow/scripts/eb_entry.py`` first, which opens the log (line-buffered)
before this library is imported, so that even an import error ends up in the rule's log.
"""

from __future__ import annotations

import sys
import traceback


def open_log(sm):
    """The rule's log, line-buffered (a job killed by SLURM keeps every line), or stderr; the
    stream eb_entry.py already opened on it when there is one."""
    if not len(sm.log):
        return sys.stderr
    if getattr(sys.stderr, "name", None) == sm.log[0] and not sys.stderr.closed:
        return sys.stderr
    return open(sm.log[0], "w", buffering=1)


def run(main, sm) -> None:
    """Call ``main(sm)`` with stderr sent to ``sm.log[0]``; a ValueError ends in one line."""
    log = open_log(sm)
    sys.stderr = log
    try:
        if "torch" in sys.modules:  # analysis and plotting jobs never import torch
            sys.modules["torch"].set_num_threads(max(1, int(getattr(sm, "threads", 1))))
        main(sm)
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
