"""Verdict by scale: the scale table reads each claim's own headline from claims.csv (it recomputes
nothing), margins by hand, both registrations, and runs written before the registration column."""

import math

import numpy as np
import pandas as pd
import pytest
from fabricate import fabricate

from entropic_bound.exploratory.scale import (
    Headline,
    figure_scale,
    scale_markdown,
    scale_rows,
    verdict_by_scale,
)


def _claims_csv(c1_ratio: float = 0.8) -> pd.DataFrame:
    """A claims.csv as the claims write it: v1 and v2 rows with their headlines."""
    rows = []
    for reg in ("v1", "v2"):
        for i in range(1, 10):
            value = c1_ratio if i == 1 else 1.0
            passed = value >= 0.5
            rows.append(
                {
                    "registration": reg,
                    "claim": f"C{i}",
                    "verdict": "reproduced" if passed else "not reproduced",
                    "headline": "L0 min R/R* over r < r*" if i == 1 else f"rate {i}",
                    "headline_value": value,
                    "headline_sense": ">=",
                    "headline_threshold": 0.5 if i == 1 else 0.9,
                    "headline_n": 12,
                }
            )
    return pd.DataFrame(rows)


def test_margin_sense_and_nan():
    assert Headline("x", 2.0, ">=", 4.0).margin == -0.5
    assert Headline("x", 2.0, "<=", 4.0).margin == 0.5
    assert Headline("x", 2.0, "<", 4.0).margin == 0.5
    assert math.isnan(Headline("x", float("nan"), ">=", 1.0).margin)
    assert math.isnan(Headline("x", 1.0, "", 1.0).margin)  # a claim without a headline


def test_rows_are_the_claims_own_headlines():
    rows = scale_rows(8, {"claims": _claims_csv(0.25)})
    c1 = rows[(rows["claim"] == "C1") & (rows["registration"] == "v2")].iloc[0]
    assert c1["value"] == 0.25 and c1["threshold"] == 0.5 and c1["n"] == 12
    assert c1["margin"] == -0.5 and c1["verdict"] == "not reproduced"


def test_a_run_from_before_the_registrations_reads_as_v1():
    old = _claims_csv()[lambda t: t["registration"] == "v1"].drop(
        columns=["registration", "headline_sense", "headline_n"]
    )
    rows = scale_rows(16, {"claims": old})
    assert set(rows["registration"]) == {"v1"} and rows["margin"].isna().all()


def test_the_claims_emit_the_headline_the_scale_table_reads():
    """End to end on fabricated tables: the claims write headline columns for every claim of v1,
    and the scale table takes them unchanged."""
    import yaml

    from entropic_bound.claims import evaluate_claims

    claims = yaml.safe_load(open("config/claims.yaml"))
    table = evaluate_claims(fabricate(), claims)
    v1 = table[table["registration"] == "v1"].set_index("claim")
    assert v1["headline_value"].notna().all(), v1["headline"]
    assert set(v1["headline_sense"]) <= {">=", "<=", "<"}
    rows = scale_rows(8, {"claims": table}).set_index(["registration", "claim"])
    assert rows.loc[("v1", "C1"), "value"] == v1.loc["C1", "headline_value"]
    assert np.isfinite(rows.loc[("v1", "C1"), "margin"])


@pytest.mark.extras
def test_table_markdown_and_figure():
    runs = {8: {"claims": _claims_csv(0.25)}, 16: {"claims": _claims_csv()}}
    table = verdict_by_scale(runs)
    assert len(table) == 36 and list(table["d"].unique()) == [8, 16]
    md = scale_markdown(table)
    assert "exploratory" in md and "**Registration v1**" in md and "**Registration v2**" in md
    assert "| C1 | L0 min R/R* over r < r* | **not reproduced** 0.25 | ✓ 0.8 | >= 0.5 |" in md
    fig = figure_scale(table)
    assert fig.axes[0].get_xlabel().startswith("d = n")
