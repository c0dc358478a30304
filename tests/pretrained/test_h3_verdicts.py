"""Registration H3's evaluator (pretrained/h3.py) on fabricated head tables: every test supported
where its claim is planted true, and failed or inconclusive where it is planted false."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from entropic_bound.pretrained import h3
from entropic_bound.pretrained.study import load_h3, qk_removed

REG = load_h3(Path(__file__).parents[2] / "config" / "heads_claims_h3.yaml")
D_HEAD = {"minilm": 32, "mpnet": 64, "smollm2": 64}


def table(heads_per_model=60, seed=0) -> pd.DataFrame:
    """Heads on which every registered test holds: small knees that the kernel's r_E(0.99)
    names, P_attn ordering them within each layer, a kernel above the field at d_head 64 and
    below it at 32, predict's answers upper bounds close to the knee."""
    rng = np.random.default_rng(seed)
    rows = []
    for model, dh in D_HEAD.items():
        rotary = model == "smollm2"
        step = 2 if rotary else 1
        for i in range(heads_per_model):
            layer, head = divmod(i, 10)
            knee = float(step * rng.integers(1, 5))
            field = knee + (8 if dh == 32 else -1)
            rows.append(
                {
                    "model": model,
                    "layer": layer,
                    "head": head,
                    "d_head": dh,
                    "d_model": 12 * dh,
                    "rotary": rotary,
                    "causal": rotary,
                    "tolerance": 0.01,
                    "ablation_share": 0.5,
                    "knee_plain": knee,
                    "knee_plain_a": knee,
                    "knee_plain_b": knee,
                    "knee_inputs_metric": knee,
                    "knee_inputs_metric_a": knee,
                    "knee_inputs_metric_b": knee,
                    "kernel_0.9": knee,
                    "kernel_0.99": knee,
                    "field_0.9": field,
                    "pattn_0.9": knee + 0.5,
                    "pattn_floor": np.nan,
                    "predict_rank": knee,
                    "predict_word": "upper bound",
                }
            )
    return pd.DataFrame(rows)


def verdicts(t):
    v = h3.evaluate(t, REG)
    return v[v["test"] != "eligibility"].groupby(["test", "model"])["verdict"].first().to_dict()


def test_every_test_is_supported_where_its_claim_is_planted_true():
    v = verdicts(table())
    assert set(v.values()) == {h3.SUPPORTED}, v
    assert len(v) == 2 + 1 + 3 + 3 + 3 + 2  # A64 ×2, A32, K1, C1, M1 per model; P1, O1


@pytest.mark.parametrize(
    "plant, test, model",
    [
        (lambda t: t.assign(**{"field_0.9": t["kernel_0.9"] + 3}), ("A64", "mpnet"), None),
        (lambda t: t.assign(**{"kernel_0.99": t["d_head"]}), ("K1", "minilm"), None),
        (lambda t: t.assign(knee_plain=t["d_head"] / 2 + 1), ("C1", "mpnet"), None),
        (lambda t: t.assign(knee_inputs_metric=t["knee_plain"] + 2), ("M1", "smollm2"), None),
        (
            lambda t: t.assign(predict_word="exact", predict_rank=t["knee_inputs_metric"] + 3),
            ("P1", "pooled"),
            None,
        ),
    ],
)
def test_a_planted_failure_fails_its_test(plant, test, model):
    t = table()
    t = plant(t)
    t["knee_plain_a"] = t["knee_plain_b"] = t["knee_plain"]
    t["knee_inputs_metric_a"] = t["knee_inputs_metric_b"] = t["knee_inputs_metric"]
    assert verdicts(t)[test] == h3.NOT_SUPPORTED


def test_p_attn_that_orders_nothing_fails_o1():
    t = table()
    t["pattn_0.9"] = np.random.default_rng(5).permutation(t["pattn_0.9"].to_numpy())
    assert verdicts(t)[("O1", "pooled")] == h3.NOT_SUPPORTED


def test_refusals_promise_nothing_but_lose_the_paired_test():
    t = table()
    t["predict_word"], t["predict_rank"] = (
        h3.REFUSED if hasattr(h3, "REFUSED") else "refused",
        np.nan,
    )
    v = h3.evaluate(t, REG)
    p1 = v[v["test"] == "P1"]
    assert p1.loc[p1["check"] == "words broken", "value"].item() == 0
    assert p1["verdict"].iloc[0] == h3.NOT_SUPPORTED


def test_too_few_eligible_heads_make_a_model_inconclusive():
    t = table()
    t.loc[(t["model"] == "minilm") & (t.index % 3 > 0), "ablation_share"] = 0.01  # 20 eligible
    v = verdicts(t)
    assert v[("K1", "minilm")] == v[("A32", "minilm")] == h3.INCONCLUSIVE
    assert v[("K1", "mpnet")] == h3.SUPPORTED


def test_an_unresolved_knee_is_not_eligible():
    t = table()
    t["knee_plain_a"] = t["knee_plain"] + 1  # within ±1: resolved
    assert h3.eligible(t, REG).all()
    t["knee_inputs_metric_b"] = t["knee_inputs_metric"] + 2  # ±2: only the rotary grid allows it
    assert h3.eligible(t, REG).to_numpy().tolist() == t["rotary"].tolist()
    t["knee_plain_a"] = t["knee_plain"] - 4
    assert not h3.eligible(t, REG).any()


def test_clopper_pearson_lower_bound_matches_the_table():
    assert h3.clopper_pearson_lower(5, 10) == pytest.approx(0.187086, abs=1e-5)
    assert h3.clopper_pearson_lower(0, 10) == 0.0
    assert h3.clopper_pearson_lower(10, 10) == pytest.approx(0.025 ** (1 / 10), abs=1e-6)


def test_the_compression_line_counts_what_rank_r_keeps():
    t = pd.DataFrame(
        {
            "model": ["a", "a", "b"],
            "d_head": [4, 4, 4],
            "d_model": [10, 10, 10],
            "rotary": [False, False, True],
            "knee_plain": [1.0, np.nan, 2.0],
        }
    )
    out = qk_removed(t).set_index("model")
    assert out.loc["a", "qk_params"] == 160 and out.loc["a", "removed"] == 60
    assert out.loc["b", "qk_params"] == 40 and out.loc["b", "removed"] == 20
