"""Rule `bounds`: the class bounds of one rung's tasks (see entropic_bound.bounds)."""

import eb_entry  # noqa: F401  first: the rule's log, then this clone's library

from entropic_bound.bounds.stage import rung_bounds
from entropic_bound.config.provenance import provenance
from entropic_bound.core.io import write_table
from entropic_bound.core.progress import heartbeat
from entropic_bound.core.rungs import parse_rung
from entropic_bound.core.runner import run

# torch only where the bounds are optimised (L0's are exact): imported before run() sets its
# thread count, which it does for a torch already loaded
if parse_rung(snakemake.wildcards.rung)[0] != "L0":  # noqa: F821
    import entropic_bound.bounds.optimise  # noqa: F401


def main(sm):
    rung = sm.wildcards.rung
    with heartbeat(f"bounds {rung}") as hb:
        table = rung_bounds(sm.config, [p for p in sm.input if p.endswith(".npz")], hb.update)
    write_table(table, sm.output[0], provenance(sm.config, rule="bounds", rung=rung))


run(main, snakemake)  # noqa: F821
