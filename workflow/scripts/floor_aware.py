"""Rule `floor_aware`: X3, the floor-aware rank beside r_E(0.99) (exploratory: no verdict)."""

import eb_entry  # noqa: F401  first: the rule's log, then this clone's library

from entropic_bound.config.provenance import provenance
from entropic_bound.core.io import read_table, write_table
from entropic_bound.core.progress import heartbeat
from entropic_bound.core.runner import run
from entropic_bound.exploratory.floor_aware import floor_aware_table

# torch, which floor_aware imports lazily: loaded before run() sets its thread count
from entropic_bound.frontier import grid  # noqa: F401


def main(sm):
    spectra = read_table(sm.input.spectra[0]) if sm.input.spectra else None
    with heartbeat("floor_aware") as hb:
        df = floor_aware_table(
            sm.config, sm.config["predict"]["clip"], progress=hb.update, spectra=spectra
        )
    write_table(df, sm.output[0], provenance(sm.config, rule="floor_aware"))


run(main, snakemake)  # noqa: F821
