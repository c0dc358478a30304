"""Rule `tasks`: write every task file of the run."""

from pathlib import Path

import eb_entry  # noqa: F401  first: the rule's log, then this clone's library

from entropic_bound.core.progress import heartbeat
from entropic_bound.core.runner import run
from entropic_bound.tasks.stage import write_tasks


def main(sm):
    with heartbeat("tasks") as hb:  # every rung (rung None)
        write_tasks(sm.config, None, Path(sm.output[0]).parent, progress=hb.update)


run(main, snakemake)  # noqa: F821
