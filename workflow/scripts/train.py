"""Rule `train`: one batched training job (see entropic_bound.train.engine)."""

import eb_entry  # noqa: F401  first: the rule's log, then this clone's library

from entropic_bound.config.provenance import provenance
from entropic_bound.core.io import read_table, write_table
from entropic_bound.core.progress import heartbeat
from entropic_bound.core.runner import run
from entropic_bound.train.stage import train_chunk


def main(sm):
    w = sm.wildcards
    bounds = (read_table(sm.input.bounds), sm.params.epsilon_task_factor)  # for ε_task
    with heartbeat(f"train {w.rung} {w.kind} c{w.chunk}") as hb:
        out = train_chunk(
            sm.config, w.rung, w.kind, list(sm.input.tasks), progress=hb.steps, bounds=bounds
        )
    prov = provenance(sm.config, rule="train", rung=w.rung, kind=w.kind, chunk=int(w.chunk))
    for name, df in out.items():
        write_table(df, sm.output[name], prov)


run(main, snakemake)  # noqa: F821
