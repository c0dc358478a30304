"""Rule `claims`: the verdict of every claim C1-C9 (claims.csv, claims.md)."""

import sys
from pathlib import Path

import eb_entry  # noqa: F401  first: the rule's log, then this clone's library

from entropic_bound.claims import claims_markdown, claims_text, evaluate_claims
from entropic_bound.claims.v4 import subclaim_table
from entropic_bound.config.load import config_hash
from entropic_bound.config.provenance import provenance
from entropic_bound.core.io import clear_partial, read_table, write_table, write_text
from entropic_bound.core.runner import run
from entropic_bound.exploratory.beyond import beyond_the_verdicts


def main(sm):
    tables = {name: read_table(path) for name, path in sm.input.items() if name != "code"}
    controls = tables.pop("controls")
    claims = sm.params.claims
    table = evaluate_claims(tables, claims, sm.config)  # v2 and v3 read the run's grid
    prov = provenance(sm.config, rule="claims", claims_hash=config_hash(claims))
    write_table(table, sm.output.csv, prov)
    sub = subclaim_table(tables, claims, sm.config)
    write_table(sub, sm.output.subclaims, prov)
    beyond = beyond_the_verdicts(
        tables["X1_boundaries"], tables["X2_c8_by_beta"], claims["estimator"]
    )
    write_text(sm.output.md, claims_markdown(table, prov, controls, sub) + "\n" + beyond, prov)
    clear_partial(Path(sm.output.md).parent)  # the banner of an earlier failed run
    print(claims_text(table), file=sys.stderr)  # into the rule's log


run(main, snakemake)  # noqa: F821
