"""Rule `provenance`: results/<run_name>/provenance.json and the report's metadata."""

import eb_entry  # noqa: F401  first: the rule's log, then this clone's library

from entropic_bound.config.provenance import provenance_rst, summarize_provenance
from entropic_bound.core.io import write_text
from entropic_bound.core.runner import run


def main(sm):
    summary = summarize_provenance(sm.config, list(sm.input), sm.output.json)
    write_text(sm.output.rst, provenance_rst(summary))


run(main, snakemake)  # noqa: F821
