"""The causal fit's signals and the word a causal softmax answer carries
(predict/causal_signals.py): read by hand from a report entry, the rule on both sides of its
threshold, and predict's answer on a head of the first-order form."""

import numpy as np
import pytest

from entropic_bound.predict.causal_signals import (
    CAUSAL_RULE,
    SIGNALS,
    causal_signals,
    causal_word,
)


def entry(**extra):
    spec = [8.0, 4.0, 2.0, 0.001, 0.001, 0.001]
    base = {
        "spectrum": spec,
        "half_spectra": [spec, [8.0, 4.0, 2.0, 2.0, 2.0, 0.001]],
        "starts": [
            {"residual": 0.1, "spectrum": spec},
            {"residual": 0.1 * (1 + 1e-4), "spectrum": [8.0, 4.0, 0.001, 0.001, 0.001, 0.001]},
            {"residual": 0.3, "spectrum": [1.0] * 6},
        ],
        "residual_share": 0.1,
        "iterations": 120,
    }
    return base | extra


def test_signals_read_by_hand():
    sig = causal_signals(entry(), answer=3)
    assert sig["split_half"] == 2  # the odd half reads r_E(0.99) 5 against the whole's 3
    assert sig["starts_spread"] == 1  # the two best starts read 3 and 2; the third is worse
    assert sig["energy_spread"] == 1  # r_E(0.99) 3, r_E(0.9) 2
    assert sig["gap_ratio"] == pytest.approx(0.001 / 2.0)
    assert sig["residual_share"] == 0.1 and sig["iterations"] == 120


def test_missing_parts_give_nan_not_an_error():
    sig = causal_signals({"spectrum": None}, answer=2)
    assert set(sig) == set(SIGNALS) and all(np.isnan(v) for v in sig.values())


def test_the_rule_gives_its_word_on_its_side_only():
    rule = {"word": "lower bound", "signal": "iterations", "sense": "<=", "threshold": 300.0}
    assert causal_word({"iterations": 120.0}, rule)[0] == "lower bound"
    assert causal_word({"iterations": 300.0}, rule)[0] == "lower bound"
    word, why = causal_word({"iterations": 301.0}, rule)
    assert word == "low" and "promises nothing" in why
    assert causal_word({"iterations": float("nan")}, rule)[0] == "low"
    up = rule | {"word": "upper bound", "sense": ">="}
    assert causal_word({"iterations": 301.0}, up)[0] == "upper bound"
    assert causal_word({"iterations": 299.0}, up)[0] == "low"
    assert CAUSAL_RULE["signal"] in SIGNALS
