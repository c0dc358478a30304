"""Rule `tasks`: write the task files of one rung, or of every rung (workflow/rules/tasks.smk)."""

from pathlib import Path

import eb_entry  # noqa: F401  first: the rule's log, then this clone's library

from entropic_bound.core.progress import heartbeat
from entropic_bound.core.runner import run
from entropic_bound.tasks.stage import write_tasks


def main(sm):
    rung = dict(sm.wildcards).get("rung")  # None: the rule's one job makes every rung's
    with heartbeat(f"tasks {rung or 'of every rung'}") as hb:
        write_tasks(sm.config, rung, Path(sm.output[0]).parent, progress=hb.update)


run(main, snakemake)  # noqa: F821
