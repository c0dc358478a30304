"""Rule `frontier_table`: T4, the exact rate per cell of the predictability frontier."""

import eb_entry  # noqa: F401  first: the rule's log, then this clone's library

from entropic_bound.analysis import frontier_table
from entropic_bound.config.provenance import provenance
from entropic_bound.core.io import read_table, write_table
from entropic_bound.core.runner import run


def main(sm):
    df = frontier_table(read_table(sm.input.frontier))
    write_table(df, sm.output[0], provenance(sm.config, rule="frontier_table"))


run(main, snakemake)  # noqa: F821
