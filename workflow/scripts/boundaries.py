"""Rule `boundaries`: σ50/σ95 of every data-only predictor (exploratory: no verdict), and σ_exact
of every teacher of P_invert and its linear twin (X1_teachers)."""

import eb_entry  # noqa: F401  first: the rule's log, then this clone's library

from entropic_bound.config.provenance import provenance
from entropic_bound.core.io import write_table
from entropic_bound.core.progress import heartbeat
from entropic_bound.core.runner import run
from entropic_bound.frontier.boundaries import boundaries_tables


def main(sm):
    p, claims = sm.config["predict"], sm.params.claims
    with heartbeat("boundaries (n, budget) cells") as hb:
        df, teachers = boundaries_tables(
            sm.config["frontier"],
            sm.config["exploratory"]["boundaries"],
            sm.config["seed"],
            estimator=claims["estimator"],
            tol=claims["numerical_tol"],
            clip=p["clip"],
            progress=hb.update,
        )
    prov = provenance(sm.config, rule="boundaries")
    write_table(df, sm.output.boundaries, prov)
    write_table(teachers, sm.output.teachers, prov)


run(main, snakemake)  # noqa: F821
