"""Rules `plot_F*`: one figure (PNG and PDF) from its cached tables."""
from entropic_bound.io import provenance, read_table
from entropic_bound.plotting import make_figure, save_figure
from entropic_bound.runner import run


def main(sm):
    tables = {name: read_table(path) for name, path in sm.input.items()}
    fig = make_figure(sm.params.figure, tables, sm.params.claims)
    save_figure(fig, sm.output.png, sm.output.pdf, provenance(sm.config, rule=sm.rule))


run(main, snakemake)  # noqa: F821
