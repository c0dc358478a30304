"""Rule `collect_train`: concatenate every training job's tables."""

import eb_entry  # noqa: F401  first: the rule's log, then this clone's library
import pandas as pd

from entropic_bound.config.provenance import provenance
from entropic_bound.core.io import read_table, write_table
from entropic_bound.core.runner import run


def main(sm):
    prov = provenance(sm.config, rule="collect_train")
    for name in ("metrics", "dynamics", "loss"):
        df = pd.concat([read_table(p) for p in sm.input[name]], ignore_index=True)
        write_table(df, sm.output[name], prov)


run(main, snakemake)  # noqa: F821
