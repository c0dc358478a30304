"""Rule `predict`: the predict jobs' spectra in one table, and the data-only predictions."""

import eb_entry  # noqa: F401  first: the rule's log, then this clone's library

from entropic_bound.config.provenance import provenance
from entropic_bound.core.io import read_table, write_table
from entropic_bound.core.runner import run
from entropic_bound.predict.tables import merged_spectra, predictions_of


def main(sm):
    spectra = merged_spectra([read_table(p) for p in sm.input], sm.params.task_ids)
    prov = provenance(sm.config, rule="predict")
    write_table(predictions_of(sm.config, spectra), sm.output.table, prov)
    write_table(spectra, sm.output.spectra, prov)  # X3's ladder reads P_attn's (floor_aware)


run(main, snakemake)  # noqa: F821
