"""Rule `train_distortion`: full-rank students on the L4 tasks' distorted L4 and L3 targets."""

import eb_entry  # noqa: F401  first: the rule's log, then this clone's library

from entropic_bound.config.provenance import provenance
from entropic_bound.core.io import write_table
from entropic_bound.core.progress import heartbeat
from entropic_bound.core.runner import run

# torch, which distortion imports lazily: loaded before run() sets its thread count
from entropic_bound.train import engine  # noqa: F401
from entropic_bound.train.distortion import distortion_table


def main(sm):
    with heartbeat("train_distortion L4 and L3 targets") as hb:
        df = distortion_table(sm.config, dict(sm.params.conditions), progress=hb.update)
    write_table(df, sm.output[0], provenance(sm.config, rule="train_distortion"))


run(main, snakemake)  # noqa: F821
