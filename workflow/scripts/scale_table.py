"""Rule `scale_table`: every claim's verdict and headline number against d (exploratory)."""

import eb_entry  # noqa: F401  first: the rule's log, then this clone's library

from entropic_bound.config.provenance import provenance
from entropic_bound.core.io import write_table, write_text
from entropic_bound.core.runner import run
from entropic_bound.exploratory.scale import (
    figure_scale,
    read_run_tables,
    scale_markdown,
    verdict_by_scale,
)
from entropic_bound.figures.draw import save_figure


def main(sm):
    # every file of each run is an input (the run is built first); its tables are read here
    runs = {d: read_run_tables(run) for d, run in zip(sm.params.scales, sm.params.runs)}
    table = verdict_by_scale(runs)
    prov = provenance(sm.config, rule="scale_table", exploratory=True)
    write_table(table, sm.output.csv, prov)
    write_text(sm.output.md, scale_markdown(table))
    save_figure(figure_scale(table), sm.output.png, sm.output.pdf, prov)


run(main, snakemake)  # noqa: F821
