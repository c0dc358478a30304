"""Figures F1–F7 render from fabricated tables, are written atomically with provenance, and every
figure and table of the workflow has its report caption."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

sys.path.insert(0, str(Path(__file__).parents[1]))

from fabricate import fabricate  # noqa: E402

from entropic_bound.analysis import frontier_table, run_analyses  # noqa: E402
from entropic_bound.figures import make_figure, save_figure  # noqa: E402
from entropic_bound.figures.spec import FIGURES, tables_of_rule  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
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
    rules = REPO / "workflow" / "rules"
    # a table's report() caption comes from common/report.smk's _REPORT_ITEMS, a figure's from
    # its spec
    common = (rules / "common" / "report.smk").read_text()
    items = common.split("_REPORT_ITEMS = {", 1)[1].split("\n}", 1)[0]
    captions = [f"{key}.rst" for key in re.findall(r'^\s+"(\w+)": \(', items, flags=re.M)]
    captions += [Path(spec.caption).name for spec in FIGURES.values()]
    smk = "".join(p.read_text() for p in rules.rglob("*.smk"))
    used = set(re.findall(r'REPORT\["(\w+)"\]', smk)) | set(FIGURES)
    assert {f"{u}.rst" for u in used} <= set(captions), "a report() id without a caption entry"
    assert {f"F{i}.rst" for i in range(1, 8)} <= set(captions)
    assert {"T1.rst", "T2.rst", "T3.rst", "T4.rst"} <= set(captions)
    assert {"X1.rst", "X1_table.rst", "X2_table.rst"} <= set(captions)
    for name in captions:
        text = (REPO / "workflow" / "report" / name).read_text().strip()
        assert text.count(". ") == 0 and text.endswith("."), f"{name}: one sentence please"


# ---------------------------------------------------------------- the figure registry


def test_every_spec_names_its_drawing_module_and_caption():
    """One FigureSpec per figure: its module draws it, its caption file exists, stems unique."""
    import importlib

    for spec in FIGURES.values():
        assert callable(importlib.import_module(f"entropic_bound.figures.{spec.module}").draw)
        assert (REPO / spec.caption).is_file(), spec.caption
        assert spec.category and spec.subcategory and spec.claims and spec.stage
    stems = [f.stem for f in FIGURES.values()]
    assert len(set(stems)) == len(stems)
    assert all(stem.startswith(fid + "_") for fid, stem in zip(FIGURES, stems))


def test_plot_rules_read_every_table_their_figures_need():
    assert "T4_frontier" in tables_of_rule("plot_frontier")
    assert "X1_boundaries" in tables_of_rule("plot_frontier")
    assert "X2_c8_by_beta" in tables_of_rule("plot_figures")
    assert "X1_boundaries" not in tables_of_rule("plot_figures")


def _boundaries_table() -> pd.DataFrame:
    rows = []
    for pred, cls in (("P_invert", "L4"), ("P_invert_linear", "L4lin"), ("P_attn", "L3")):
        for n in (4, 8):
            for beta in (0.25, 1.0) if cls != "L3" else (float("nan"),):
                for B in (64, 128, 512):
                    s50 = 0.0 if (pred == "P_invert" and n == 8 and B == 64) else 1e-3 * B / n
                    rows.append(
                        {
                            "predictor": pred,
                            "class": cls,
                            "value_map": "known",
                            "n": n,
                            "d": 8,
                            "beta": beta,
                            "n_seqs": B,
                            "frontier_budget": B == 128,
                            "n_cases": 4,
                            "clean_std": 0.5,
                            "rate_clean": 1.0,
                            "sigma50": s50,
                            "sigma95": s50 / 2,
                            "sigma50_rel": s50 / 0.5,
                            "sigma95_rel": s50,
                            "n_evals": 7,
                        }
                    )
    return pd.DataFrame(rows)


def test_x1_renders_with_a_zero_tolerance_on_the_floor(claims, tmp_path):
    fig = make_figure("X1", {"X1_boundaries": _boundaries_table()}, claims)
    assert [ax.get_xlabel() for ax in fig.axes[:3]] == [
        "data budget B (sequences)",
        "data budget B (sequences)",
        "inverse temperature β",
    ]
    save_figure(fig, tmp_path / "x.png", tmp_path / "x.pdf", dpi=40)


def test_x1_without_rows_renders_a_note(claims):
    fig = make_figure("X1", {"X1_boundaries": _boundaries_table().iloc[:0]}, claims)
    assert any(t.get_text() == "no boundaries computed" for t in fig.axes[0].texts)


def test_f5_has_a_row_by_beta(tables, claims):
    by_beta = pd.DataFrame(
        [
            {
                "kernels": k,
                "beta": b,
                "estimator": e,
                "n": 4,
                "exact_rate": 1.0,
                "mean_abs_error": 0.1 * b,
            }
            for k in ("learned", "data-only")
            for b in (0.5, 1.0, 2.0)
            for e in ("entropy", "energy_0.99")
        ]
    )
    fig = make_figure("F5", {**tables, "X2_c8_by_beta": by_beta}, claims)
    titles = [ax.get_title() for ax in fig.axes if ax.get_visible()]
    assert sum("by β" in t for t in titles) == 2
