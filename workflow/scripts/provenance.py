"""Rule `provenance`: results/<run_name>/provenance.json."""

from entropic_bound.io import summarize_provenance
from entropic_bound.runner import run


def main(sm):
    summarize_provenance(sm.config, list(sm.input), sm.output[0])


run(main, snakemake)  # noqa: F821
