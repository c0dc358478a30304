"""Run a workflow script: log to the rule's log, one-line errors, thread count from the rule.

Knows nothing of Snakemake beyond the duck-typed ``snakemake`` object a script receives.
"""

from __future__ import annotations

import sys
import traceback


def run(main, sm) -> None:
    """Call ``main(sm)`` with stderr sent to ``sm.log[0]``; a ValueError ends in one line."""
    log = open(sm.log[0], "w") if len(sm.log) else sys.stderr
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
