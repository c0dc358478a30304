"""predict's words on trained heads against their knees (heads/promises.py): signals read by
hand, each registered test failing on a planted input, the separation measure."""

import json

import numpy as np
import pandas as pd
import pytest

from entropic_bound.heads import promises as pr

REG = {
    "name": "H9",
    "registered": "2026-12-08",
    "truth": "knee_inputs_metric",
    "min_eligible_heads": 4,
    "alpha": 0.05,
    "tests": {
        "W1": {"max_broken": 0},
        "W2": {"constant": "model_median"},
        "W3": {"min_promised_share": 0.5},
    },
}


def predict_rows(answers, knees, words, model="m"):
    """A study predict table: one head per answer, a spectrum with a clear cut at the answer."""
    rows = []
    for i, (a, k, w) in enumerate(zip(answers, knees, words, strict=True)):
        spec = [10.0] * int(a) + [1e-3] * (16 - int(a))
        rows.append(
            {
                "model": model,
                "layer": i // 4,
                "head": i % 4,
                "knee": k,
                "knee_inputs_metric": k,
                "eligible": True,
                "predict_rank": float(a),
                "predict_estimator": "energy_0.99",
                "predict_confidence": w,
                "predict_spectrum": json.dumps(spec),
                "predict_spectrum_even": json.dumps(spec),
                "predict_spectrum_odd": json.dumps([10.0] * (int(a) + 2) + [1e-3] * (14 - int(a))),
                "predict_starts": json.dumps([[0.1, spec], [0.1, spec], [0.5, [1.0] * 16]]),
                "predict_truncation": json.dumps(
                    [1.0] + [0.5] * (int(a) - 1) + [0.1] * (17 - int(a))
                ),
                "predict_held_out": json.dumps(
                    [1.0] + [0.5] * (int(a) - 1) + [0.1] * (17 - int(a))
                ),
                "predict_residual_share": 0.1,
                "predict_iterations": 50,
            }
        )
    return pd.DataFrame(rows)


def test_signals_and_candidates_read_by_hand():
    t = pr.promises(predict_rows([3], [3], ["exact"]))
    row = t.iloc[0]
    assert row["split_half"] == 2  # the odd half reads 5 against 3
    assert row["starts_spread"] == 0  # the two best starts agree; the third is far worse
    assert row["energy_spread"] == 0 and row["gap_ratio"] == pytest.approx(1e-4)
    assert row["answer_fit_knee_0.01"] == 3 and row["answer_held_out_knee_0.01"] == 3
    assert bool(row["holds"]) and row["error"] == 0


def test_every_test_supported_on_right_answers():
    p = predict_rows([2, 3, 4, 5, 6, 7, 8, 9], [2, 3, 4, 5, 6, 7, 8, 9], ["exact"] * 8)
    v = pr.evaluate(pr.promises(p), REG).set_index("test")
    assert (v["verdict"] == "supported").all(), v


def test_a_broken_word_fails_w1():
    p = predict_rows(
        [2, 3, 4, 5, 6, 7, 8, 1], [2, 3, 4, 5, 6, 7, 8, 9], ["exact"] * 7 + ["upper bound"]
    )
    v = pr.evaluate(pr.promises(p), REG).set_index("test")
    assert v.loc["W1", "verdict"] == "not supported" and v.loc["W1", "value"] == 1


def test_an_answer_no_better_than_the_constant_fails_w2():
    # every answer 6, the knees spread around their median 6: the constant ties every head
    p = predict_rows([6] * 8, [2, 4, 5, 6, 6, 7, 8, 10], ["low"] * 8)
    v = pr.evaluate(pr.promises(p), REG).set_index("test")
    assert v.loc["W2", "verdict"] == "not supported" and v.loc["W2", "value"] == 1.0


def test_too_few_promises_fail_w3_and_too_few_heads_are_inconclusive():
    p = predict_rows(
        [2, 3, 4, 5, 6, 7, 8, 9], [2, 3, 4, 5, 6, 7, 8, 9], ["low"] * 6 + ["exact"] * 2
    )
    v = pr.evaluate(pr.promises(p), REG).set_index("test")
    assert v.loc["W3", "verdict"] == "not supported" and v.loc["W3", "value"] == 0.25
    assert v.loc["W1", "verdict"] == "supported"  # no promise broken
    few = pr.evaluate(pr.promises(p.iloc[:3]), REG)
    assert (few["verdict"] == "inconclusive").all()
    assert pr.evaluate(pr.promises(p), None).empty  # no registration: no verdict


def test_auc_solved_by_hand_and_separation_by_wrong_answers():
    assert pr.auc([3, 4], [1, 2]) == 1.0
    assert pr.auc([1, 2], [3, 4]) == 0.0
    assert pr.auc([1, 2], [1, 2]) == 0.5
    assert np.isnan(pr.auc([], [1.0]))
    p = predict_rows([2, 3, 4, 5, 1, 1, 1, 1], [2, 3, 4, 5, 6, 7, 8, 9], ["low"] * 8)
    sep = pr.separations(pr.promises(p))
    under = sep[sep["wrong"] == "under"].set_index("signal")
    assert under.loc["residual_share", "auc"] == 0.5  # the same everywhere: no signal
    assert under.loc["split_half", "wrong_heads"] == 4
