"""Rule `predict`: data-only predictions on every task."""

import eb_entry  # noqa: F401  first: the rule's log, then this clone's library

from entropic_bound.config.provenance import provenance
from entropic_bound.core.io import write_table
from entropic_bound.core.progress import heartbeat
from entropic_bound.core.runner import run
from entropic_bound.predict.stage import data_only_spectra, predictions_of


def main(sm):
    with heartbeat("predict") as hb:
        spectra = data_only_spectra(sm.config, list(sm.input), progress=hb.update)
    prov = provenance(sm.config, rule="predict")
    write_table(predictions_of(sm.config, spectra), sm.output.table, prov)
    write_table(spectra, sm.output.spectra, prov)  # X3's ladder reads P_attn's (floor_aware)


run(main, snakemake)  # noqa: F821
