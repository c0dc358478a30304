"""Rules `plot_figures`, `plot_frontier`, `plot_reference`: figures (PNG and PDF) from cached
tables (a run's, or the shipped reference's: params.stamp names where they came from)."""

import eb_entry  # noqa: F401  first: the rule's log, then this clone's library

from entropic_bound.config.provenance import provenance
from entropic_bound.core.io import read_table, stamp
from entropic_bound.core.runner import run
from entropic_bound.figures.draw import make_figure, save_figure


def main(sm):
    tables = {name: read_table(path) for name, path in sm.input.items() if name != "code"}
    prov = {**provenance(sm.config, rule=sm.rule), **getattr(sm.params, "stamp", {})}
    for fig_id in sm.params.figures:
        fig = make_figure(fig_id, tables, sm.params.claims)
        paths = sm.output[f"{fig_id}_png"], sm.output[f"{fig_id}_pdf"]
        save_figure(fig, *paths, {**prov, "figure": fig_id})
        for path in paths:
            stamp(path, {**prov, "figure": fig_id})


run(main, snakemake)  # noqa: F821
