"""Rule `boundaries`: σ50/σ95 of every data-only predictor (exploratory: no verdict)."""

import eb_entry  # noqa: F401  first: the rule's log, then this clone's library

from entropic_bound.boundaries import boundaries_table
from entropic_bound.io import provenance, write_table
from entropic_bound.runner import run


def main(sm):
    p, claims = sm.config["predict"], sm.params.claims
    df = boundaries_table(
        sm.config["frontier"],
        sm.config["exploratory"]["boundaries"],
        sm.config["seed"],
        estimator=claims["estimator"],
        tol=claims["numerical_tol"],
        clip=p["clip"],
    )
    write_table(df, sm.output[0], provenance(sm.config, rule="boundaries"))


run(main, snakemake)  # noqa: F821
