"""benchmarks/predict_battery.py: a small battery (sharp softmax, causal without its mask, the
out-projected mix of torch's heads, a batch-second layout, too few sequences for P_static) has
no confident undercount, and its generators make what they say."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def battery():
    spec = importlib.util.spec_from_file_location(
        "predict_battery", REPO / "benchmarks" / "predict_battery.py"
    )
    mod = importlib.util.module_from_spec(spec)
    sys.modules["predict_battery"] = mod  # its dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


def test_the_own_generator_has_the_logit_scale_and_rank_it_says(battery):
    case = battery.Case("own", 64, 16, 8, 3, 4.0)
    rng = np.random.default_rng(case.seed)
    A = battery._kernel(rng, 8, 3, 4.0)
    assert np.linalg.matrix_rank(A) == 3
    assert math.isclose(np.linalg.norm(A), 4.0)  # logit std of unit Gaussian tokens
    X, Y = battery.make(case)
    assert X.shape == (64, 16, 8) and Y.shape == (64, 16, 8)


def test_torch_heads_have_the_logit_scale_asked_and_layouts_transpose(battery):
    X, Y = battery.make(battery.Case("mha_head", 64, 16, 8, 2, 3.0, heads=4))
    assert Y.shape == (64, 16, 2)  # one head: d_v = d / H
    X, Y = battery.make(battery.Case("mha_heads", 64, 16, 8, 2, 3.0, heads=4))
    assert Y.shape == (64, 4, 16, 2)
    Xt, Yt = battery.make(battery.Case("mha_mix", 64, 16, 8, 2, 3.0, heads=4, layout="nBD"))
    assert Xt.shape == (16, 64, 8) and Yt.shape == (16, 64, 8)


def test_a_small_battery_has_no_confident_undercount(battery):
    import pandas as pd

    cases = battery.battery(seeds=(7,), small=True)
    assert len(cases) >= 6
    rows = [row for case in cases for row in battery.predict_case(case)]
    df = pd.DataFrame(rows)
    assert not df["confident_undercount"].any(), df[df["confident_undercount"]].to_dict("records")


def test_the_functional_knee_is_the_rank_where_every_direction_moves_the_output(battery):
    # unit Gaussian tokens, singular values 1 … 0.5: every direction matters at 1 %
    knees = battery.functional_knees(battery.Case("own", 512, 32, 16, 5, 4.0))
    assert knees == {"knee_plain": 5.0, "knee_inputs_metric": 5.0}
    # the recomputed head is the generated one: its output at full rank is Y
    case = battery.Case("own", 256, 32, 16, 3, 2.0, inputs="layernorm", qk_bias=True, dv=8)
    parts = battery.own_parts(case)
    assert np.allclose(battery.make(case)[1], parts["Y"])
    knees = battery.functional_knees(case)  # finite only if the rebuilt head's e(3) is ~0
    assert 1 <= knees["knee_inputs_metric"] <= knees["knee_plain"] <= 3
    assert battery.functional_knees(battery.Case("mha_head", 64, 16, 8, 2, 3.0, heads=4)) == {
        "knee_plain": pytest.approx(math.nan, nan_ok=True),
        "knee_inputs_metric": pytest.approx(math.nan, nan_ok=True),
    }
