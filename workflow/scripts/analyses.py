"""Rule `analyses`: risk curves, knees, learned ranks, rank dynamics, the ladder, T2, T3."""

import eb_entry  # noqa: F401  first: the rule's log, then this clone's library

from entropic_bound.analysis.stage import run_analyses
from entropic_bound.config.provenance import provenance
from entropic_bound.core.io import read_table, write_table
from entropic_bound.core.runner import run


def main(sm):
    claims, p = sm.params.claims, sm.config["predict"]
    tables = run_analyses(
        read_table(sm.input.predictions),
        read_table(sm.input.metrics),
        read_table(sm.input.dynamics),
        estimator=claims["estimator"],
        epsilon=claims["epsilon"],
        taus=p["taus"],
        tol=p["tol"],
        sigma=float(sm.config["task"]["sigma"]),  # T2, T3 at the tasks' own noise
    )
    for name, df in tables.items():
        write_table(df, sm.output[name], provenance(sm.config, rule="analyses"))


run(main, snakemake)  # noqa: F821
