"""Rule `predict`: data-only predictions on every task."""

from entropic_bound.io import provenance, write_table
from entropic_bound.pipeline import data_only_predictions
from entropic_bound.runner import run


def main(sm):
    df = data_only_predictions(sm.config, list(sm.input))
    write_table(df, sm.output[0], provenance(sm.config, rule="predict"))


run(main, snakemake)  # noqa: F821
