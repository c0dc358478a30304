"""The heads study's registered tests (docs/method.md §9b) on fabricated heads tables: true
where the claim holds, false in the way each check exists to catch, inconclusive where the
study is too small to decide."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from entropic_bound.config.heads import load_heads_claims
from entropic_bound.config.load import ConfigError
from entropic_bound.heads.claims import (
    INCONCLUSIVE,
    NOT_SUPPORTED,
    SUPPORTED,
    evaluate,
    verdict_markdown,
)

REPO = Path(__file__).resolve().parents[2]
REG = load_heads_claims(REPO / "config" / "heads_claims.yaml")


def fabricated(models: int = 6, heads: int = 16, seed: int = 0, **broken) -> pd.DataFrame:
    """A study's heads: knees spread 2–12 within each model, every head eligible; the estimates
    name the knee (±1 noise on one head in four), P_attn orders it (a level of 30, slope 2).
    ``broken``: ``flat`` (the estimate a constant near the knees, which span 5–7: within ±1
    everywhere but no better than the median of the others), ``random`` (estimates unrelated
    to the knee), ``nan`` (no estimate), ``unresolved`` (share of knees not resolved),
    ``few_models`` (only this many models large enough to order)."""
    rng = np.random.default_rng(seed)
    rows = []
    for m in range(models):
        knees = rng.integers(5, 8, heads) if broken.get("flat") else rng.integers(2, 13, heads)
        for h, knee in enumerate(knees):
            noise = rng.choice([-1, 0, 0, 0, 0, 0, 0, 1])
            rows.append(
                {
                    "model": f"m{m}",
                    "layer": h // 4,
                    "head": h % 4,
                    "knee": float(knee),
                    "gap": 0.05,
                    "knee_resolved": True,
                    "qk_energy_0.99": float(knee + noise),
                    "logit_energy_0.9": float(knee),
                    "pattn_energy_0.9": 30.0 + 2 * knee + rng.normal(0, 1),
                }
            )
    t = pd.DataFrame(rows)
    if broken.get("flat"):
        t["qk_energy_0.99"] = 6.0
    if broken.get("random"):
        for col in ("qk_energy_0.99", "pattn_energy_0.9"):
            t[col] = rng.permutation(t[col].to_numpy())
    if broken.get("nan"):
        t["logit_energy_0.9"] = np.nan
    if share := broken.get("unresolved"):
        t["knee_resolved"] = rng.random(len(t)) >= share
    if (few := broken.get("few_models")) is not None:
        t = t[(t["model"].str[1:].astype(int) < few) | (t["head"] == 0)]
    return t


def verdicts(table) -> dict:
    return evaluate(table, REG).groupby("claim")["verdict"].first().to_dict()


def test_the_registration_is_dated_and_valid():
    assert REG["registered"] == "2026-12-06"
    assert set(REG["names_the_knee"]) == {"K1", "K2"} and set(REG["orders_the_heads"]) == {"O1"}


def test_every_claim_passes_where_it_is_true():
    v = verdicts(fabricated())
    assert v == {"eligibility": "enough", "K1": SUPPORTED, "K2": SUPPORTED, "O1": SUPPORTED}


def test_within_one_but_no_better_than_the_constant_fails():
    # knees 5–7 and an estimate of 6: within ±1 on every head, the constant's equal
    t = evaluate(fabricated(flat=True), REG)
    k1 = t[t["claim"] == "K1"].set_index("check")
    assert k1.loc["within ±1 share", "value"] == 1.0 and k1.loc["within ±1 share", "passed"]
    assert not k1.loc["Holm-adjusted p", "passed"]
    assert (k1["verdict"] == NOT_SUPPORTED).all()


def test_an_unrelated_estimate_fails_both_kinds():
    v = verdicts(fabricated(random=True))
    assert v["K1"] == NOT_SUPPORTED and v["O1"] == NOT_SUPPORTED and v["K2"] == SUPPORTED


def test_a_nan_estimate_is_a_miss_and_a_loss():
    t = evaluate(fabricated(nan=True), REG)
    k2 = t[t["claim"] == "K2"].set_index("check")
    assert k2.loc["within ±1 share", "value"] == 0.0 and (k2["verdict"] == NOT_SUPPORTED).all()


def test_too_few_eligible_heads_is_inconclusive():
    # 3 models of 16 heads: 48 eligible < 64
    v = verdicts(fabricated(models=3))
    assert v == {"eligibility": INCONCLUSIVE, "K1": INCONCLUSIVE, "K2": INCONCLUSIVE,
                 "O1": INCONCLUSIVE}  # fmt: skip
    # unresolved knees are not eligible either
    assert verdicts(fabricated(unresolved=0.5))["K1"] == INCONCLUSIVE


def test_too_few_models_to_order_is_inconclusive_for_that_test_only():
    # 8 models: 3 of 16 heads, 5 cut to head 0 of each layer (4 heads < 5): 68 eligible heads
    t = fabricated(models=8, few_models=3)
    v = verdicts(t)
    assert v["O1"] == INCONCLUSIVE and v["K1"] == SUPPORTED
    o1 = evaluate(t, REG).query("claim == 'O1'")
    assert "3 models" in o1["note"].iloc[0] and o1["passed"].isna().all()


def test_a_missing_column_is_one_line():
    with pytest.raises(ValueError, match="lacks pattn_energy_0.9"):
        evaluate(fabricated().drop(columns="pattn_energy_0.9"), REG)


def test_the_table_reads_as_markdown():
    md = verdict_markdown(evaluate(fabricated(), REG))
    assert "| K1 | qk_energy_0.99 | within ±1 share |" in md and "supported" in md


def test_a_bad_registration_is_one_line(tmp_path):
    import yaml

    doc = yaml.safe_load((REPO / "config" / "heads_claims.yaml").read_text())
    doc["names_the_knee"]["K1"]["column"] = "qk_energy"  # no τ
    path = tmp_path / "r.yaml"
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(ConfigError, match="names_the_knee.K1.column"):
        load_heads_claims(path)


def test_h2_is_h1s_tests_unchanged_on_another_study():
    """Registration H2 (docs/method.md §9d) copies every test of H1 key for key: only its name
    differs, and its study is H1's cells and measurement at new seeds, more of them."""
    from entropic_bound.config.heads_study import load_heads_study

    h2 = load_heads_claims(REPO / "config" / "heads_claims_h2.yaml")
    assert h2.pop("name") == "H2" and "name" not in REG and h2 == REG
    s1 = load_heads_study(REPO / "config" / "heads_study.yaml", REPO)
    s2 = load_heads_study(REPO / "config" / "heads_study_h2.yaml", REPO)
    assert s2["cells"] == s1["cells"] and not set(s2["seeds"]) & set(s1["seeds"])
    assert len(s2["models"]) > len(s1["models"])
    first = [next(iter(s["models"].values())) for s in (s1, s2)]
    same = [{k: v for k, v in m.items() if k not in ("run_name", "seed")} for m in first]
    assert same[0] == same[1]


def test_an_ordering_owed_to_the_layers_alone_fails_within_layers():
    from entropic_bound.heads.study import within_layers

    reg = load_heads_claims(Path(__file__).parents[2] / "config" / "heads_claims_h2.yaml")
    t = fabricated()
    # knee and P_attn both follow the layer; within a layer, P_attn is unrelated to the knee
    rng = np.random.default_rng(3)
    t["knee"] = 3.0 * t["layer"] + rng.integers(0, 3, len(t))
    t["pattn_energy_0.9"] = 10.0 * t["layer"] + rng.normal(0, 1, len(t))
    t["knee_resolved"] = True
    layered = within_layers(t, reg).set_index("claim").loc["O1"]
    assert layered["rho"] > 0.5 and layered["p_within_model"] < 0.01
    assert layered["p_within_layer"] > 0.05
    t["pattn_energy_0.9"] = 10.0 * t["layer"] + t["knee"]  # now it orders within layers too
    assert within_layers(t, reg).set_index("claim").loc["O1", "p_within_layer"] < 0.01
