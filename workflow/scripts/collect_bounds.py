"""Rule `collect_bounds`: every rung's bounds in tables/bounds.csv."""

import eb_entry  # noqa: F401  first: the rule's log, then this clone's library
import pandas as pd

from entropic_bound.config.provenance import provenance
from entropic_bound.core.io import read_table, write_table
from entropic_bound.core.runner import run


def main(sm):
    table = pd.concat([read_table(p) for p in sm.input], ignore_index=True)
    write_table(table, sm.output[0], provenance(sm.config, rule="collect_bounds"))


run(main, snakemake)  # noqa: F821
