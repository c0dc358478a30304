"""Rule `predict_part`: the data-only spectra of the tasks of one predict job."""

import eb_entry  # noqa: F401  first: the rule's log, then this clone's library

from entropic_bound.config.provenance import provenance
from entropic_bound.core.io import write_table
from entropic_bound.core.progress import heartbeat
from entropic_bound.core.runner import run
from entropic_bound.predict.stage import data_only_spectra


def main(sm):
    part = sm.wildcards.part
    with heartbeat(f"predict {part}") as hb:
        gram = sm.output[1] if len(sm.output) > 1 else None  # Σ xᵀx for the best bounds
        spectra = data_only_spectra(sm.config, list(sm.input), hb.update, gram_out=gram)
    write_table(spectra, sm.output[0], provenance(sm.config, rule="predict_part", part=part))


run(main, snakemake)  # noqa: F821
