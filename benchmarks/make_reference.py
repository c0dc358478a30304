"""Write the reference of `entropic-bound verify` from a finished run (rerun after a change of
the tables, e.g. a new claims column or a new table).

    python benchmarks/make_reference.py [results/paper] [--out benchmarks/reference/paper]

Copies every CSV table of ``<run>/tables/`` byte for byte into ``<out>/<table>.csv.gz``
and the run's data-only spectra into ``<out>/predict_spectra.parquet``
(gzip without a timestamp, so that rerunning on the same tables rewrites the same bytes),
removes reference tables the run no longer has, and writes ``<out>/MANIFEST.json`` (the run's
config hash and commit from its provenance.json, the CPU, each table's sha256 and row count).
Verify compares only the tables the reference holds. The tolerances
(benchmarks/reference/tolerances.yaml) are measured separately: benchmarks/measure_tolerances.py.

It also copies, byte for byte, the parquet tables a figure reads (``train_metrics.parquet``, F2's:
figures/spec.py), so that `make figures` draws every figure from the reference alone; MANIFEST's
``figure_inputs`` names each with the run it came from. ``--figure-inputs-only`` copies only
those and keeps the reference's CSV tables (a figure input added from another run).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import shutil
import sys
from pathlib import Path

import pyarrow.parquet as pq

from entropic_bound.core.io import atomic_path
from entropic_bound.figures.spec import FIGURES, PARQUET_TABLES, figure_tables, table_file
from entropic_bound.train.fused import cpu_summary
from entropic_bound.verify.rules import SPECTRA_FILE

REPO = Path(__file__).resolve().parents[1]
#: tables whose cross-CPU tolerance has not been measured (benchmarks/measure_tolerances.py):
#: none since bounds.csv and X3 were (2026-12-06, docs/reproducibility.md)
UNMEASURED: tuple[str, ...] = ()


def write_gzip(src: Path, dest: Path) -> None:
    """``src`` compressed into ``dest`` atomically, with mtime 0 and no file name (same bytes in,
    same bytes out)."""
    data = src.read_bytes()
    with atomic_path(dest, ".gz") as tmp, open(tmp, "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as gz:
            gz.write(data)


def _run_stamp(run: Path) -> dict:
    prov_file = run / "provenance.json"
    prov = json.loads(prov_file.read_text()) if prov_file.is_file() else {}
    return {
        "run": run.name,
        "config_hash": prov.get("config_hash"),
        "git_commit": prov.get("git_commit"),
        "cpu": cpu_summary(),
    }


def figure_inputs(run: Path) -> list[Path]:
    """The run's parquet tables that a figure reads (CSV ones are among the reference tables)."""
    return [run / "tables" / table_file(t) for t in figure_tables() if t in PARQUET_TABLES]


def figure_input_entries(run: Path, inputs: list[Path]) -> dict:
    """MANIFEST's ``figure_inputs``: each file's sha256, rows, the figures that read it and the
    run it came from (whole tables: every row and column)."""
    return {
        p.name: {
            "sha256": hashlib.sha256(p.read_bytes()).hexdigest(),
            "rows": pq.ParquetFile(p).metadata.num_rows,
            "read_by": [k for k, f in FIGURES.items() if p.name in map(table_file, f.tables)],
            "content": "the whole table: every row and column",
            **_run_stamp(run),
        }
        for p in inputs
    }


def manifest(run: Path, tables: list[Path]) -> dict:
    return {
        "made_by": "benchmarks/make_reference.py",
        **_run_stamp(run),
        "tables": {
            p.name: {
                "sha256": hashlib.sha256(p.read_bytes()).hexdigest(),
                "rows": max(0, len(p.read_text().splitlines()) - 1),
            }
            for p in tables
        },
    }


def write_figure_inputs(run: Path, out: Path, inputs: list[Path], doc: dict) -> None:
    """Copy ``inputs`` into ``out`` and write MANIFEST.json: ``doc`` with their entries."""
    for p in inputs:
        with atomic_path(out / p.name, p.suffix) as tmp:
            shutil.copyfile(p, tmp)
    doc["figure_inputs"] = figure_input_entries(run, inputs)
    with atomic_path(out / "MANIFEST.json") as tmp:
        tmp.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", nargs="?", default=str(REPO / "results" / "paper"))
    ap.add_argument("--out", default=str(REPO / "benchmarks" / "reference" / "paper"))
    ap.add_argument(
        "--figure-inputs-only",
        action="store_true",
        help="copy only the parquet tables a figure reads; keep the reference's CSV tables",
    )
    ap.add_argument(
        "--exclude",
        nargs="*",
        default=list(UNMEASURED),
        help="tables left out (default: those whose cross-CPU tolerance is not measured)",
    )
    args = ap.parse_args(argv)
    run, out = Path(args.run), Path(args.out)
    inputs = figure_inputs(run)
    missing = [p for p in inputs if not p.is_file()]
    if missing:
        print(
            f"make_reference: error: {missing[0]} does not exist; finish the run first",
            file=sys.stderr,
        )
        return 2
    if args.figure_inputs_only:
        doc = json.loads((out / "MANIFEST.json").read_text())
        write_figure_inputs(run, out, inputs, doc)
        print(f"{len(inputs)} figure inputs of {run} -> {out}")
        return 0
    tables = sorted(t for t in (run / "tables").glob("*.csv") if t.name not in args.exclude)
    if not tables:
        print(
            f"make_reference: error: {run}/tables holds no CSV table; finish the run first",
            file=sys.stderr,
        )
        return 2
    out.mkdir(parents=True, exist_ok=True)
    for p in tables:
        write_gzip(p, out / f"{p.name}.gz")
    keep = {f"{p.name}.gz" for p in tables}
    for stale in out.glob("*.csv.gz"):
        if stale.name not in keep:
            stale.unlink()
    # the data-only spectra: verify reads the margins of P_attn's and P_static's rank decisions
    # from them (docs/reproducibility.md, "Decisions made by a threshold")
    spectra = run / "predict" / "spectra.parquet"
    if spectra.is_file():
        (out / SPECTRA_FILE).write_bytes(spectra.read_bytes())
    write_figure_inputs(run, out, inputs, manifest(run, tables))
    print(
        f"{len(tables)} tables of {run} -> {out} "
        f"({sum((out / k).stat().st_size for k in keep) / 1024:.0f} KiB compressed)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
