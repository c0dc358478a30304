"""Rule `frontier`: the predictability frontier grid."""

import eb_entry  # noqa: F401  first: the rule's log, then this clone's library

from entropic_bound.config.provenance import provenance
from entropic_bound.core.io import write_table
from entropic_bound.core.progress import heartbeat
from entropic_bound.core.runner import run
from entropic_bound.frontier.grid import frontier_grid


def main(sm):
    p = sm.config["predict"]
    with heartbeat("frontier") as hb:
        df = frontier_grid(
            sm.config["frontier"],
            sm.config["seed"],
            taus=p["taus"],
            tol=p["tol"],
            clip=p["clip"],
            progress=hb.update,
        )
    write_table(df, sm.output[0], provenance(sm.config, rule="frontier"))


run(main, snakemake)  # noqa: F821
