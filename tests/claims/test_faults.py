"""Faults, in every registration (docs/method.md §5c): fabricated tables with one fault each, read
back through ``load_tables`` and judged by ``evaluate_claims``. Every registration × claim row
comes back; a claim the fault reaches says "missing input" and names the cell or table; every
other claim keeps its verdict on the unfaulted world. The bounding rule is checked by hand and as
a property: a decided outcome never contradicts any filling of the unknown cells."""

from __future__ import annotations

import dataclasses
import itertools
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parents[1]))

from fabricate import fabricate  # noqa: E402,F401  the fabricated tables planted_world builds on

from entropic_bound.claims.controls import planted_run, planted_world  # noqa: E402
from entropic_bound.claims.registry import REGISTRY, evaluate_claims, load_tables  # noqa: E402
from entropic_bound.claims.verdict import (  # noqa: E402
    MISSING,
    NOT_REPRODUCED,
    TABLE_FILES,
    Claim,
    bound,
    bounded,
)

REPO = Path(__file__).resolve().parents[2]
#: the frontier cell the frontier faults touch: (value map, n, r*, seed), σ = 0, n > d
CELL = {"value_map": "unknown", "n": 16, "r_star": 1, "seed": 0}
CELL_LABEL = "unknown/16/1/0"


@pytest.fixture(scope="module")
def claims() -> dict:
    from entropic_bound.config.load import load_config

    return load_config(REPO / "config" / "claims.yaml", schema="claims")


def _through_disk(tables: dict, directory: Path) -> dict:
    """The tables as the claims stage reads them: written under their file names, loaded back."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, df in tables.items():
        if name not in TABLE_FILES:
            continue
        path = directory / TABLE_FILES[name]
        df.to_parquet(path, index=False) if path.suffix == ".parquet" else df.to_csv(
            path, index=False
        )
    return load_tables(directory)


# ---------------------------------------------------------------- the faults


def _nan_spectrum(w: dict) -> tuple[dict, list[str]]:
    """One L4 full-rank student's learned spectrum NaN (a diverged student)."""
    m = w["train_metrics"].copy()
    own = (m["rung"] == "L4") & ~m["static_student"].astype(bool)
    full = own & (m["rank"] == m.loc[own, "rank"].max())
    i = m.index[full & (m["task_id"] == "L4_r2_s1") & (m["seed"] == 1)][0]
    m.at[i, "spectrum"] = [np.nan] * len(m.at[i, "spectrum"])
    return {**w, "train_metrics": m}, ["L4_r2_s1", "train_metrics.parquet"]


def _empty_metrics(w: dict) -> tuple[dict, list[str]]:
    """train_metrics with its columns and no rows."""
    return {**w, "train_metrics": w["train_metrics"].iloc[:0]}, ["train_metrics.parquet"]


def _task_dropped(task: str):
    def fault(w: dict) -> tuple[dict, list[str]]:
        m = w["train_metrics"]
        return {**w, "train_metrics": m[m["task_id"] != task].reset_index(drop=True)}, [task]

    fault.__doc__ = f"Every row of the registered task {task} gone from train_metrics."
    return fault


def _no_best_bound(w: dict) -> tuple[dict, list[str]]:
    """bounds.csv without its best-known bound R_best."""
    return {**w, "bounds": w["bounds"].drop(columns=["R_best"])}, ["R_best"]


def _cell(f: pd.DataFrame, cls: str) -> pd.Series:
    at = (f["class"] == cls) & (f["predictor"] == "P_attn") & (f["sigma"] == 0)
    for col, value in CELL.items():
        at &= f[col] == value
    return at


def _nan_competitor(w: dict) -> tuple[dict, list[str]]:
    """A competitor's (the stable rank's) estimate NaN on one matched L3 cell of C8 v3."""
    f = w["frontier"]
    at = _cell(f, "L3") & (f["estimator"] == "stable")
    assert at.sum() == 1
    return {**w, "frontier": f.assign(r_hat=f["r_hat"].mask(at))}, [CELL_LABEL]


def _l3_cell_absent(w: dict) -> tuple[dict, list[str]]:
    """An L4 frontier cell present without its matched L3 cell (every estimator's row gone)."""
    f = w["frontier"]
    at = _cell(f, "L3")
    assert at.sum() > 0 and _cell(f, "L4").sum() > 0
    return {**w, "frontier": f[~at].reset_index(drop=True)}, [CELL_LABEL]


FAULTS = {
    "nan learned spectrum (one L4 student)": _nan_spectrum,
    "empty train_metrics": _empty_metrics,
    "an L0 task without rows": _task_dropped("L0_r2_s1"),
    "an L4 task without rows": _task_dropped("L4_r4_s2"),
    "bounds.csv without R_best": _no_best_bound,
    "NaN competitor error (C8 v3)": _nan_competitor,
    "L4 cell without its L3 cell": _l3_cell_absent,
}
#: claims each fault is known to leave undecided (the test that the faults reach something);
#: only the registrations present in REGISTRY are asked
REACHED = {
    "nan learned spectrum (one L4 student)": {("v1", "C8"), ("v2", "C8")},
    "empty train_metrics": {(r, c) for r in ("v1", "v2", "v3") for c in ("C2", "C3", "C7")},
    "an L0 task without rows": {("v3", "C2")},
    "an L4 task without rows": {("v3", "C5"), ("v3", "C7")},
    "bounds.csv without R_best": {("v3", "C1"), ("v3", "C2"), ("v3", "C6"), ("v3", "C7")},
    "NaN competitor error (C8 v3)": {("v3", "C8")},
    "L4 cell without its L3 cell": {("v3", "C8")},
}


@pytest.fixture(scope="module")
def judged(claims, tmp_path_factory):
    """fault (None: the unfaulted world) -> evaluate_claims' table, with ``names``: the cell or
    table names a reason may give for that fault; each world judged once."""
    cache: dict[str | None, pd.DataFrame] = {}

    def judge(fault: str | None) -> pd.DataFrame:
        if fault not in cache:
            tables, names = planted_world(), []
            if fault is not None:
                tables, names = FAULTS[fault](tables)
            loaded = _through_disk(tables, tmp_path_factory.mktemp("tables"))
            table = evaluate_claims(loaded, claims, planted_run())
            cache[fault] = table.assign(names="|".join(names))
        return cache[fault]

    return judge


def _full_table(table: pd.DataFrame) -> None:
    want = {(reg, cid) for reg, cs in REGISTRY.items() for cid in cs}
    got = list(zip(table["registration"], table["claim"]))
    assert len(got) == len(want) and set(got) == want


@pytest.mark.parametrize("registration", list(REGISTRY))
@pytest.mark.parametrize("fault", list(FAULTS))
def test_a_fault_is_the_missing_input_of_the_claims_it_reaches(judged, fault, registration):
    good, bad = judged(None), judged(fault)
    _full_table(bad)
    names = bad["names"].iloc[0].split("|")
    before = good[good["registration"] == registration].set_index("claim")
    after = bad[bad["registration"] == registration].set_index("claim")
    for cid, row in after.iterrows():
        if row["verdict"] == before.loc[cid, "verdict"]:
            continue
        assert row["verdict"] == MISSING, (cid, row["verdict"], row["measured"])
        assert any(n in row["measured"] for n in names), (cid, names, row["measured"])
    for reg, cid in REACHED[fault]:
        if reg == registration:
            assert after.loc[cid, "verdict"] == MISSING, (cid, after.loc[cid, "measured"])
            assert any(n in after.loc[cid, "measured"] for n in names), after.loc[cid, "measured"]


@pytest.mark.parametrize("registration", list(REGISTRY))
def test_an_exception_inside_a_claim_is_its_missing_input(
    claims, judged, tmp_path_factory, monkeypatch, registration
):
    """Any exception (not only the four once caught, and in every registration) becomes that
    claim's one missing-input row, with its type and message on one line. A registration whose
    claims are data (v4) is faulted one line at a time instead (tests/claims/test_v4.py)."""
    if type(next(iter(REGISTRY[registration].values()))) is not Claim:
        pytest.skip(f"{registration}'s claims evaluate sub-claims: faulted in test_v4.py")
    good = judged(None)
    cid = next(iter(REGISTRY[registration]))

    def raises(*args, **kwargs):
        raise RuntimeError("planted\nfault")

    victim = dataclasses.replace(REGISTRY[registration][cid], checks=raises)
    monkeypatch.setitem(REGISTRY[registration], cid, victim)
    tables = _through_disk(planted_world(), tmp_path_factory.mktemp("raise"))
    table = evaluate_claims(tables, claims, planted_run())
    _full_table(table)
    row = table[(table["registration"] == registration) & (table["claim"] == cid)].iloc[0]
    assert row["verdict"] == MISSING
    assert "RuntimeError" in row["measured"] and "planted fault" in row["measured"]
    assert "\n" not in row["measured"]
    others = table.drop(row.name)
    assert list(others["verdict"]) == list(good.drop(row.name)["verdict"])


def test_a_missing_input_does_not_hide_a_failure(claims, tmp_path_factory):
    """Absent knees (no R_best) with P_static wrong on L1: the static rungs fail whatever the
    knees are, so v3's C6 stays not reproduced."""
    if "v3" not in REGISTRY:
        pytest.skip("registration v3 is not registered")
    world = planted_world({"C6_static"})
    world["bounds"] = world["bounds"].drop(columns=["R_best"])
    table = evaluate_claims(world, claims, planted_run()).set_index(["registration", "claim"])
    assert table.loc[("v3", "C6"), "verdict"] == NOT_REPRODUCED


# ---------------------------------------------------------------- the bounding rule


def _rate(need: float, at_most: bool):
    return lambda filled: filled.mean() <= need if at_most else filled.mean() >= need


def test_bound_by_hand():
    assert bound(lambda fav: True) is True  # passes even with the unknown cells against it
    assert bound(lambda fav: False) is False  # fails even with them for it
    assert bound(lambda fav: fav) is None  # they alone decide
    cells = pd.Series([True, True, True, np.nan], dtype="object")
    assert bounded(cells, _rate(0.75, False)) is True  # 3/4 even with the NaN a miss
    assert bounded(cells, _rate(0.8, False)) is None  # 3/4 < 0.8 ≤ 4/4
    two = pd.Series([True, False, False, np.nan], dtype="object")
    assert bounded(two, _rate(0.75, False)) is False  # 2/4 even with the NaN a hit
    # "at most": a hit speaks against the claim, so an unknown counts as a hit against it
    hits = pd.Series([False, False, False, np.nan], dtype="object")
    assert bounded(hits, _rate(0.25, True), good=False) is True  # 1/4 ≤ 0.25
    assert bounded(hits, _rate(0.2, True), good=False) is None  # 0/4 ≤ 0.2 < 1/4
    assert bounded(pd.Series([True, np.nan], dtype="object"), lambda f: f.all()) is None
    assert bounded(pd.Series([False, np.nan], dtype="object"), lambda f: f.all()) is False


cells = st.lists(st.sampled_from([True, False, None]), min_size=1, max_size=8)


@given(cells, st.floats(0.0, 1.0), st.booleans())
def test_a_decided_rate_holds_for_every_filling_of_the_unknowns(values, need, at_most):
    outcome = pd.Series(values, dtype="object")
    passes = _rate(need, at_most)
    decided = bounded(outcome, passes, good=not at_most)
    unknown = [i for i, v in enumerate(values) if v is None]
    results = set()
    for filling in itertools.product([True, False], repeat=len(unknown)):
        filled = list(values)
        for i, v in zip(unknown, filling):
            filled[i] = v
        results.add(bool(passes(pd.Series(filled, dtype=bool))))
    if decided is not None:
        assert results == {decided}
    else:  # undecided only where the fillings disagree
        assert results == {True, False}


@given(cells)
def test_a_decided_universal_check_holds_for_every_filling(values):
    outcome = pd.Series(values, dtype="object")
    decided = bounded(outcome, lambda f: f.all())
    unknown = [i for i, v in enumerate(values) if v is None]
    for filling in itertools.product([True, False], repeat=len(unknown)):
        filled = list(values)
        for i, v in zip(unknown, filling):
            filled[i] = v
        if decided is not None:
            assert all(filled) == decided


@given(
    st.lists(st.one_of(st.none(), st.integers(0, 5)), min_size=3, max_size=5),
    st.floats(-1.0, 1.0),
)
def test_a_decided_trend_holds_for_every_filling(values, limit):
    """C6's Spearman trend with unknown rungs: a decided outcome holds for every value the
    unknown rungs could take (here: every integer 0…5)."""
    from entropic_bound.analysis import spearman
    from entropic_bound.claims.c6 import _bounded_trend

    lam = np.linspace(0.0, 1.0, len(values))
    x = pd.Series([np.nan if v is None else float(v) for v in values])
    decided = _bounded_trend(lam, x, ">=", limit)[0]
    if decided is None:
        return
    unknown = [i for i, v in enumerate(values) if v is None]
    for filling in itertools.product(range(6), repeat=len(unknown)):
        filled = [float(v) if v is not None else 0.0 for v in values]
        for i, v in zip(unknown, filling):
            filled[i] = float(v)
        rho = spearman(lam, filled)
        if not abs(rho - limit) < 1e-9:  # at the threshold itself rounding may differ
            assert bool(rho >= limit) == decided
