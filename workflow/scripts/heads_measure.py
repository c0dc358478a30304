"""Rule `heads_measure`: every head's truncation knee and the ranks of its three spectra
(docs/method.md §9, exploratory)."""

import sys

import eb_entry  # noqa: F401  first: the rule's log, then this clone's library

from entropic_bound.config.provenance import provenance
from entropic_bound.core.runner import run
from entropic_bound.heads.measure import measure_heads


def main(sm):
    cfg = sm.params.heads
    prov = provenance(cfg, rule="heads_measure", exploratory=True)
    measure_heads(
        cfg,
        sm.input.model,
        sm.output.table,
        sm.output.curves,
        log=_say,
        prov=prov,
        windows_path=sm.output.windows,
    )


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)  # the rule's log (eb_entry)


run(main, snakemake)  # noqa: F821
