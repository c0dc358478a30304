"""Rule `bounds`: the class bounds of the tasks of one or more rungs (see entropic_bound.bounds),
each rung computed alone, in the group's order."""

import eb_entry  # noqa: F401  first: the rule's log, then this clone's library
import pandas as pd

from entropic_bound.bounds.stage import rung_bounds
from entropic_bound.config.provenance import provenance
from entropic_bound.core.io import write_table
from entropic_bound.core.progress import heartbeat
from entropic_bound.core.rungs import parse_rung
from entropic_bound.core.runner import run

# torch only where bounds are optimised (L0's are exact): imported before run() sets its
# thread count, which it does for a torch already loaded
if any(parse_rung(r)[0] != "L0" for r in snakemake.params.task_files):  # noqa: F821
    import entropic_bound.bounds.optimise  # noqa: F401


def main(sm):
    tables = []
    for rung, paths in sm.params.task_files.items():  # the group's rungs, in order
        with heartbeat(f"bounds {rung}") as hb:
            tables.append(rung_bounds(sm.config, paths, hb.update))
    group = "+".join(sm.params.task_files)
    table = pd.concat(tables, ignore_index=True)
    write_table(table, sm.output[0], provenance(sm.config, rule="bounds", rung=group))


run(main, snakemake)  # noqa: F821
