"""Rule `controls`: every check of every registration on planted inputs (controls.csv)."""

import eb_entry  # noqa: F401  first: the rule's log, then this clone's library

from entropic_bound.claims.controls import controls_table
from entropic_bound.config.load import config_hash
from entropic_bound.config.provenance import provenance
from entropic_bound.core.io import write_table
from entropic_bound.core.runner import run


def main(sm):
    claims = sm.params.claims
    table = controls_table(claims)
    prov = provenance(sm.config, rule="controls", claims_hash=config_hash(claims))
    write_table(table, sm.output[0], prov)


run(main, snakemake)  # noqa: F821
