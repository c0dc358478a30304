"""Claims C1–C9 on fabricated tables: a reproducing world passes, a broken one fails, an absent
table is "missing input", and every threshold comes from config/claims.yaml."""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

sys.path.insert(0, str(Path(__file__).parent))

from fabricate import fabricate, write_tables  # noqa: E402

from entropic_bound.claims import (
    CLAIMS,
    COLUMNS,
    MISSING,
    NEEDS,
    NOT_REPRODUCED,  # noqa: E402
    REPRODUCED,
    claims_markdown,
    claims_text,
    evaluate_claims,
    load_tables,
)

REPO = Path(__file__).resolve().parents[1]
IDS = list(CLAIMS)


@pytest.fixture(scope="module")
def thresholds() -> dict:
    return yaml.safe_load((REPO / "config" / "claims.yaml").read_text())


@pytest.fixture(scope="module")
def good() -> dict:
    return fabricate()


@pytest.mark.parametrize("cid", IDS)
def test_reproducing_tables_reproduce(cid, good, thresholds):
    row = CLAIMS[cid](good, thresholds)
    assert set(row) == set(COLUMNS)
    assert row["claim"] == cid
    assert row["verdict"] == REPRODUCED, row["measured"]
    assert row["measured"] and row["threshold"] and row["statement"]


@pytest.mark.parametrize("cid", IDS)
def test_broken_tables_are_not_reproduced(cid, thresholds):
    row = CLAIMS[cid](fabricate(broken={cid}), thresholds)
    assert row["verdict"] == NOT_REPRODUCED, row["measured"]


@pytest.mark.parametrize("cid", IDS)
def test_absent_table_is_missing_input(cid, good, thresholds):
    for name in NEEDS[cid]:
        tables = {**good, name: None}
        row = CLAIMS[cid](tables, thresholds)
        assert row["verdict"] == MISSING
        assert "absent" in row["measured"]


def test_only_the_broken_claim_fails_where_claims_are_independent(thresholds):
    """Breaking C3 (L0 learned spectra) must not touch the data-only or frontier claims."""
    table = evaluate_claims(fabricate(broken={"C3"}), thresholds).set_index("claim")["verdict"]
    assert table["C3"] == NOT_REPRODUCED
    for cid in ("C1", "C2", "C4", "C5", "C6", "C9"):
        assert table[cid] == REPRODUCED


def test_thresholds_are_read_from_the_config(good, thresholds):
    strict = copy.deepcopy(thresholds)
    strict["C2"]["max_risk"] = 1e-5  # the fabricated students reach R = 3e-4 at r*
    assert CLAIMS["C2"](good, strict)["verdict"] == NOT_REPRODUCED
    lax = copy.deepcopy(thresholds)
    lax["C1"]["min_ratio_to_theory"] = 0.1
    assert CLAIMS["C1"](fabricate(broken={"C1"}), lax)["verdict"] == REPRODUCED
    assert "0.1" in CLAIMS["C1"](good, lax)["threshold"]


def test_c4_needs_every_clean_task(thresholds):
    """C4's clean threshold is 100%: one wrong L0 task of six is enough to fail."""
    row = CLAIMS["C4"](fabricate(broken={"C4"}), thresholds)
    assert row["verdict"] == NOT_REPRODUCED
    assert "5/6" in row["measured"]


def test_c6_with_too_few_ladder_rungs_is_missing_input(thresholds):
    tables = fabricate(rungs=("L0", "L1", "L2", "L3", "L4"))
    row = CLAIMS["C6"](tables, thresholds)
    assert row["verdict"] == MISSING
    assert "need ≥ 3" in row["measured"]


def test_c6_on_the_quick_ladder_computes_on_what_exists(thresholds):
    tables = fabricate(rungs=("L0", "L1", "L2", "L3", "L4", "Lam0.50"))
    row = CLAIMS["C6"](tables, thresholds)
    assert row["verdict"] == REPRODUCED, row["measured"]
    assert "3 ladder rungs: L2, Lam0.50, L4" in row["measured"]


def test_a_failed_check_outranks_a_missing_one(thresholds):
    """No σ = 0.01 cells (as in the quick grid): missing input, unless another check failed."""
    good = fabricate()
    f = good["frontier"]
    quick = {**good, "frontier": f[~np.isclose(f["sigma"], 0.01)]}
    assert CLAIMS["C9"](quick, thresholds)["verdict"] == MISSING
    bad = fabricate(broken={"C9"})
    f = bad["frontier"]
    bad["frontier"] = f[~np.isclose(f["sigma"], 0.01)]
    assert CLAIMS["C9"](bad, thresholds)["verdict"] == NOT_REPRODUCED


def test_absent_rung_is_named(thresholds):
    tables = fabricate(rungs=("L0", "L1", "L2", "L3", "Lam0.25", "Lam0.50"))
    row = CLAIMS["C7"](tables, thresholds)
    assert row["verdict"] == MISSING
    assert "L4: absent" in row["measured"]


def test_evaluate_claims_and_markdown(good, thresholds, tmp_path):
    table = evaluate_claims(good, thresholds)
    assert list(table.columns) == COLUMNS
    assert list(table["claim"]) == IDS
    md = claims_markdown(table, {"run_name": "fab", "config_hash": "abc", "git_commit": "x"})
    for cid in IDS:
        assert f"## {cid}: reproduced" in md
    assert "9 reproduced, 0 not reproduced, 0 missing input" in md
    assert claims_text(table).splitlines()[0].startswith("claim")


def test_load_tables_maps_absent_files_to_none(tmp_path, good, thresholds):
    write_tables({k: good[k] for k in ("data_only_predictions", "frontier")}, tmp_path)
    tables = load_tables(tmp_path)
    assert tables["train_metrics"] is None and tables["frontier"] is not None
    table = evaluate_claims(tables, thresholds).set_index("claim")["verdict"]
    assert table["C4"] == REPRODUCED and table["C9"] == REPRODUCED
    assert table["C1"] == MISSING and table["C5"] == MISSING
