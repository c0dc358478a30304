"""Rule `c8_by_beta`: C8's estimator comparison by β (exploratory: no verdict)."""

import eb_entry  # noqa: F401  first: the rule's log, then this clone's library

from entropic_bound.config.provenance import provenance
from entropic_bound.core.io import read_table, write_table
from entropic_bound.core.progress import heartbeat
from entropic_bound.core.runner import run
from entropic_bound.exploratory.c8_by_beta import estimators_by_beta


def main(sm):
    claims = sm.params.claims
    with heartbeat("c8_by_beta") as hb:
        hb.note = "reading the learned spectra and frontier.csv"
        learned, frontier = read_table(sm.input.learned), read_table(sm.input.frontier)
        hb.note = "estimators by β"
        df = estimators_by_beta(
            learned,
            frontier,
            sm.config["exploratory"]["c8_beta"]["betas"],
            claims["C8"]["estimators"],
            n_tokens=sm.config["task"]["n"],
            tol=claims["numerical_tol"],
            progress=hb.update,
        )
    write_table(df, sm.output[0], provenance(sm.config, rule="c8_by_beta"))


run(main, snakemake)  # noqa: F821
