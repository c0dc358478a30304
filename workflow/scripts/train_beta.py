"""Rule `train_beta`: full-rank L4 students at every β of exploratory.c8_beta."""

import eb_entry  # noqa: F401  first: the rule's log, then this clone's library

from entropic_bound.config.provenance import provenance
from entropic_bound.core.io import write_table
from entropic_bound.core.progress import heartbeat
from entropic_bound.core.runner import run
from entropic_bound.exploratory.c8_by_beta import train_full_rank_by_beta

# torch, which c8_by_beta imports lazily: loaded before run() sets its thread count
from entropic_bound.train import engine  # noqa: F401


def main(sm):
    betas = sm.config["exploratory"]["c8_beta"]["betas"]
    with heartbeat("train_beta L4 full rank") as hb:
        df = train_full_rank_by_beta(sm.config, betas, progress=hb.update)
    write_table(df, sm.output[0], provenance(sm.config, rule="train_beta"))


run(main, snakemake)  # noqa: F821
