"""Recompute a finished run's claims (both registrations) with this clone's code, from its
cached tables: what rule `claims` does, for a run made before a registration or a headline
column existed (no task, no training, nothing else is redone).

    python benchmarks/reclaim.py results/scale_d32 config/scale/d32.yaml

The run's config is read as its run saw it (over config/config.yaml); writes
``<run>/tables/claims.csv`` and ``<run>/claims.md`` atomically, stamped ``recomputed``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from entropic_bound.claims import claims_markdown, evaluate_claims, load_tables
from entropic_bound.config.load import config_hash, load_config, load_run_config
from entropic_bound.config.provenance import provenance
from entropic_bound.core.io import write_table, write_text

REPO = Path(__file__).resolve().parents[1]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", type=Path, help="results/<run_name>")
    ap.add_argument("config", help="the run's config file")
    args = ap.parse_args(argv)
    cfg = load_run_config(args.config)
    claims = load_config(REPO / "config" / "claims.yaml", schema="claims")
    table = evaluate_claims(load_tables(args.run / "tables"), claims, cfg)
    prov = provenance(cfg, rule="claims", claims_hash=config_hash(claims), recomputed=True)
    write_table(table, args.run / "tables" / "claims.csv", prov)
    write_text(args.run / "claims.md", claims_markdown(table, prov), prov)
    print(table[["registration", "claim", "verdict"]].to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
