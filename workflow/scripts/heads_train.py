"""Rule `heads_train`: the heads model trained on the corpus (docs/method.md §9, exploratory)."""

import sys

import eb_entry  # noqa: F401  first: the rule's log, then this clone's library

from entropic_bound.config.provenance import provenance
from entropic_bound.core.runner import run
from entropic_bound.heads.stage import train_heads


def main(sm):
    cfg = sm.params.heads
    prov = provenance(cfg, rule="heads_train", exploratory=True)
    train_heads(cfg, sm.output.model, sm.output.curve, log=_say, prov=prov)


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)  # the rule's log (eb_entry)


run(main, snakemake)  # noqa: F821
