"""`make figures` (rule reference_figures): every figure and table of the paper from the shipped
reference (benchmarks/reference/paper) alone, with no run, by the drawing of plot_figures."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from entropic_bound.figures.spec import FIGURES, figure_tables, reference_file

REPO = Path(__file__).resolve().parents[2]
REFERENCE = REPO / "benchmarks" / "reference" / "paper"
SMK = str(Path(sys.executable).with_name("snakemake"))
#: T1 (claims), T2-T4, X1-X3 and the controls: the tables of workflow/rules/figures.smk
PAPER_TABLES = (
    "claims",
    "controls",
    "T2_intrinsic_ranks",
    "T3_estimators",
    "T4_frontier",
    "X1_boundaries",
    "X2_c8_by_beta",
    "X3_floor_aware",
)


def test_the_reference_ships_every_table_a_figure_reads():
    missing = [t for t in figure_tables() if not (REFERENCE / reference_file(t)).is_file()]
    assert not missing, f"benchmarks/make_reference.py: {missing} not in {REFERENCE}"
    manifest = json.loads((REFERENCE / "MANIFEST.json").read_text())
    for name, entry in manifest["figure_inputs"].items():
        assert (REFERENCE / name).is_file() and entry["read_by"], name


def test_the_figures_import_no_torch():
    """Drawing reads tables only, never a model: no torch."""
    modules = [f"entropic_bound.figures.{f.module}" for f in FIGURES.values()]
    modules += ["entropic_bound.figures.draw", "entropic_bound.config.provenance"]
    code = f"import importlib, sys\nfor m in {modules!r}:\n    importlib.import_module(m)\n"
    code += "print(sorted(k for k in sys.modules if k.split('.')[0] == 'torch')[:3])"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert r.returncode == 0 and r.stdout.strip() == "[]", (r.stdout, r.stderr)


def test_make_figures_draws_every_figure_from_the_reference(tmp_path):
    """From a working directory outside the clone, as on a cluster's scratch: every figure's PNG
    and PDF and every paper table under results/reference_figures/, nothing else run."""
    cmd = [SMK, "reference_figures", "-s", str(REPO / "Snakefile"), "-d", str(tmp_path)]
    r = subprocess.run([*cmd, "--cores", "1"], cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    out = tmp_path / "results" / "reference_figures"
    for f in FIGURES.values():
        for ext in ("png", "pdf"):
            assert (out / f"{f.stem}.{ext}").stat().st_size > 10_000, f"{f.stem}.{ext}"
    for t in PAPER_TABLES:
        assert (out / "tables" / f"{t}.csv").read_bytes()[:8], t
    ran = {line.split()[-1].rstrip(")") for line in r.stderr.splitlines() if "(Rule: " in line}
    assert ran == {"plot_reference", "reference_table", "reference_figures"}, ran
