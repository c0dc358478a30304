"""Figures F1–F7 render from fabricated tables, are written atomically with provenance, and every
figure and table of the workflow has its report caption."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).parent))

from fabricate import fabricate  # noqa: E402

from entropic_bound.analysis import frontier_table, run_analyses  # noqa: E402
from entropic_bound.plotting import make_figure, save_figure  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
FIGURE_IDS = [f"F{i}" for i in range(1, 8)]


@pytest.fixture(scope="module")
def claims() -> dict:
    return yaml.safe_load((REPO / "config" / "claims.yaml").read_text())


def _analysis_tables(raw: dict, claims: dict, trained: bool = True) -> dict:
    out = run_analyses(
        raw["data_only_predictions"],
        raw["train_metrics"] if trained else None,
        raw["train_dynamics"] if trained else None,
        claims["estimator"],
        claims["epsilon"],
    )
    out["T4_frontier"] = frontier_table(raw["frontier"])
    out["train_metrics"] = raw["train_metrics"]
    return out


@pytest.fixture(scope="module")
def tables(claims) -> dict:
    return _analysis_tables(fabricate(rungs=("L0", "L1", "L2", "L3", "L4", "Lam0.50")), claims)


@pytest.mark.parametrize("fig_id", FIGURE_IDS)
def test_every_figure_renders_and_saves(fig_id, tables, claims, tmp_path):
    fig = make_figure(fig_id, tables, claims)
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert axes
    labelled = [ax for ax in axes if ax.get_xlabel() or ax.get_ylabel()]
    assert labelled or fig.supxlabel, f"{fig_id} has no axis label"
    png, pdf = tmp_path / f"{fig_id}.png", tmp_path / f"{fig_id}.pdf"
    save_figure(fig, png, pdf, {"config_hash": "abc123"}, dpi=50)  # low dpi: a fast test
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert pdf.read_bytes()[:5] == b"%PDF-"
    assert b"abc123" in png.read_bytes() and b"abc123" in pdf.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [png.name, pdf.name]
    )  # no temp left


def test_figures_mark_r_star(tables, claims):
    """F1 and F2 draw r* (dotted lines) per r*; F7 plots against r*."""
    for fig_id in ("F1", "F2"):
        fig = make_figure(fig_id, tables, claims)
        dotted = [ln for ax in fig.axes for ln in ax.get_lines() if ln.get_linestyle() == ":"]
        assert len(dotted) >= 3, fig_id
    f7 = make_figure("F7", tables, claims)
    assert any("r*" in ax.get_xlabel() for ax in f7.axes)


def test_figures_without_training_tables_still_render(claims):
    t = _analysis_tables(fabricate(rungs=("L0", "L3", "L4")), claims, trained=False)
    for fig_id in ("F3", "F4", "F5", "F6", "F7"):
        make_figure(fig_id, t, claims)


def test_unknown_figure_is_a_one_line_error(tables, claims):
    with pytest.raises(ValueError, match="unknown figure"):
        make_figure("F9", tables, claims)


def test_every_report_output_has_a_one_sentence_caption():
    smk = (REPO / "workflow" / "rules" / "analysis.smk").read_text()
    captions = re.findall(r'caption="\.\./report/([^"]+)"', smk)
    assert {f"F{i}.rst" for i in range(1, 8)} <= set(captions)
    assert {"T1.rst", "T2.rst", "T3.rst", "T4.rst"} <= set(captions)
    for name in captions:
        text = (REPO / "workflow" / "report" / name).read_text().strip()
        assert text.count(". ") == 0 and text.endswith("."), f"{name}: one sentence please"
