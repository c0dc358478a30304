"""Rule `best_bounds`: the best-known class bounds of the tasks of one bounds group (see
entropic_bound.bounds.best), each rung computed alone, in the group's order."""

import eb_entry  # noqa: F401  first: the rule's log, then this clone's library
import pandas as pd

import entropic_bound.bounds.optimise  # noqa: F401  torch before run() sets its thread count
from entropic_bound.bounds.best import rung_best_bounds
from entropic_bound.config.provenance import provenance
from entropic_bound.core.io import read_table, write_table
from entropic_bound.core.progress import heartbeat
from entropic_bound.core.runner import run
from entropic_bound.train.factors import load_factors


def main(sm):
    v2 = read_table(sm.input.v2)
    tables = []
    for rung, paths in sm.params.task_files.items():  # the group's rungs, in order
        files = sm.params.train_files[rung]
        metrics = pd.concat([read_table(p) for p in files["metrics"]], ignore_index=True)
        factors = pd.concat([load_factors(p) for p in files["factors"]], ignore_index=True)
        with heartbeat(f"best_bounds {rung}") as hb:
            grams = sm.params.grams.get(rung)  # P_static's Σ xᵀx of each static task's stream
            tables.append(
                rung_best_bounds(sm.config, rung, paths, v2, factors, metrics, hb.update, grams)
            )
    group = "+".join(sm.params.task_files)
    table = pd.concat(tables, ignore_index=True)
    write_table(table, sm.output[0], provenance(sm.config, rule="best_bounds", rung=group))


run(main, snakemake)  # noqa: F821
