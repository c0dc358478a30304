"""Rule `predict`: data-only predictions on every task."""

import eb_entry  # noqa: F401  first: the rule's log, then this clone's library

from entropic_bound.config.provenance import provenance
from entropic_bound.core.io import write_table
from entropic_bound.core.progress import heartbeat
from entropic_bound.core.runner import run
from entropic_bound.predict.stage import data_only_predictions


def main(sm):
    with heartbeat("predict") as hb:
        df = data_only_predictions(sm.config, list(sm.input), progress=hb.update)
    write_table(df, sm.output[0], provenance(sm.config, rule="predict"))


run(main, snakemake)  # noqa: F821
