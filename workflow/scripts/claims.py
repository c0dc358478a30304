"""Rule `claims`: the verdict of every claim C1-C9 (claims.csv, claims.md)."""

import sys

from entropic_bound.claims import claims_markdown, claims_text, evaluate_claims
from entropic_bound.config import config_hash
from entropic_bound.io import provenance, read_table, write_table, write_text
from entropic_bound.runner import run


def main(sm):
    tables = {name: read_table(path) for name, path in sm.input.items() if name != "code"}
    table = evaluate_claims(tables, sm.params.claims)
    prov = provenance(sm.config, rule="claims", claims_hash=config_hash(sm.params.claims))
    write_table(table, sm.output.csv, prov)
    write_text(sm.output.md, claims_markdown(table, prov))
    print(claims_text(table), file=sys.stderr)  # into the rule's log


run(main, snakemake)  # noqa: F821
