"""Rule `heads_predict`: entropic-bound predict's recommendation on each selected head's
captured X, Y, with the causal mask (docs/method.md §9c, item (e))."""

import sys

import eb_entry  # noqa: F401  first: the rule's log, then this clone's library

from entropic_bound.config.provenance import provenance
from entropic_bound.core.runner import run
from entropic_bound.heads.predicted import predict_heads


def main(sm):
    cfg = sm.params.heads
    prov = provenance(cfg, rule="heads_predict", exploratory=True)
    predict_heads(cfg, sm.input.model, sm.output.table, log=_say, prov=prov)


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)  # the rule's log (eb_entry)


run(main, snakemake)  # noqa: F821
