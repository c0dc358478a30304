"""Rule `pretrained_measure`: every head of one pretrained model's capture measured as
registration H3 fixes it (docs/method.md §9e): knees under both truncations, their halves,
the spectra's estimators and `predict`'s answer. Its log says only how far it has got."""

import json
import sys
from pathlib import Path

import eb_entry  # noqa: F401  first: the rule's log, then this clone's library

from entropic_bound.config.provenance import provenance
from entropic_bound.core.io import write_table, write_text
from entropic_bound.core.runner import run
from entropic_bound.pretrained.measure import measure_capture


def main(sm):
    import torch

    torch.set_num_threads(max(1, int(sm.threads)))
    heads, curves = measure_capture(
        sm.input.capture, sm.wildcards.pmodel, sm.params.tolerance, log=_say
    )
    write_table(heads, sm.output.heads)
    write_table(curves, sm.output.curves)
    manifest = json.loads((Path(sm.input.capture) / "manifest.json").read_text())
    prov = provenance(sm.params.cfg, rule="pretrained_measure", model=manifest["model"])
    write_text(sm.output.stamp, json.dumps(prov, indent=2, sort_keys=True) + "\n")


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


run(main, snakemake)  # noqa: F821
