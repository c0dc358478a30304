"""Rule `train`: one training job, the sweep and the static students of one chunk of a rung
(see entropic_bound.train.engine), and the sweep's students' factors at the bounds' ranks."""

import eb_entry  # noqa: F401  first: the rule's log, then this clone's library

from entropic_bound.config.provenance import provenance
from entropic_bound.core.io import read_table, write_table
from entropic_bound.core.progress import heartbeat
from entropic_bound.core.runner import run
from entropic_bound.train.factors import save_factors
from entropic_bound.train.stage import load_tasks, train_chunk


def main(sm):
    w = sm.wildcards
    bounds = (read_table(sm.input.bounds), sm.params.epsilon_task_factor)  # for ε_task
    tasks = load_tasks(sm.input.tasks)  # once for both kinds
    sweep = None  # the sweep's tables: its full-rank students are the rung's own static ones
    for kind in sm.params.kinds:  # sweep, then static: one process, torch loaded once
        with heartbeat(f"train {w.rung} {kind} c{w.chunk}") as hb:
            out = train_chunk(
                sm.config, w.rung, kind, tasks, progress=hb.steps, bounds=bounds, sweep=sweep
            )
        if kind == "sweep":
            sweep = {k: v for k, v in out.items() if k != "factors"}
        prov = provenance(sm.config, rule="train", rung=w.rung, kind=kind, chunk=int(w.chunk))
        factors = out.pop("factors", None)  # the sweep's: the best bounds' starts
        if factors is not None:
            save_factors(factors, sm.output.factors, prov)
        for name, df in out.items():
            write_table(df, sm.output[f"{name}_{kind}"], prov)


run(main, snakemake)  # noqa: F821
