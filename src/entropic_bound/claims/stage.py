"""The claims of a run in which some jobs failed (Snakemake's ``onerror``)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd


def claims_after_failure(cfg: dict, claims_cfg: dict, run_dir) -> pd.DataFrame:
    """The claims table of a run in which some jobs failed (Snakemake's ``onerror``).

    Reads whatever tables exist; the training tables are assembled from the training jobs that
    finished. A claim whose input is absent says "missing input", never "reproduced". Written
    to ``<run_dir>/partial/`` (claims.csv, claims.md with a "Partial run" banner), never over
    the outputs of rule ``claims``: a later successful run removes the directory
    (``io.clear_partial``), so no banner outlives the failure that caused it.
    """
    from entropic_bound.claims import claims_markdown, evaluate_claims, load_tables
    from entropic_bound.config.provenance import provenance
    from entropic_bound.core.io import PARTIAL_DIR, read_table, write_table, write_text

    run_dir = Path(run_dir)
    tables = load_tables(run_dir / "tables")
    for name, suffix in (("train_metrics", "metrics"), ("train_dynamics", "dynamics")):
        if tables.get(name) is None:
            parts = sorted((run_dir / "train").glob(f"*/*.{suffix}.parquet"))
            tables[name] = (
                pd.concat([read_table(p) for p in parts], ignore_index=True) if parts else None
            )
    table = evaluate_claims(tables, claims_cfg, cfg)
    prov = provenance(cfg, rule="onerror", partial=True)
    out = run_dir / PARTIAL_DIR
    write_table(table, out / "claims.csv", prov)
    write_text(
        out / "claims.md",
        "**Partial run: some jobs failed; claims that need their "
        "outputs say `missing input`.**\n\n" + claims_markdown(table, prov),
        prov,
    )
    return table
