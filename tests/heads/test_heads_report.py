"""Which estimator names the knee (docs/method.md §9): the agreement table on a table of heads
solved by hand, the summary page and the figures."""

import math

import numpy as np
import pandas as pd
import pytest

from entropic_bound.heads.ranks import SPECTRA, estimator_columns
from entropic_bound.heads.report import agreement, knee_sensitivity, summary_markdown

TAUS = [0.9, 0.99]


def heads_table() -> pd.DataFrame:
    """Four heads, one without a knee; qk_energy_0.9 = knee on 2 of the 3 with one."""
    rows = []
    for i, (knee, qk) in enumerate([(3, 3), (5, 5), (4, 6), (math.nan, 1)]):
        row = {"layer": 0, "head": i, "knee": knee, "d_head": 8}
        row |= {"loss_full": 1.0, "loss_ablated": 1.0 if math.isnan(knee) else 2.0}
        row["gap"] = row["loss_ablated"] - row["loss_full"]
        for spectrum in SPECTRA:
            for est in estimator_columns(TAUS):
                row[f"{spectrum}_{est}"] = 2.5  # rounds half up to 3
        row["qk_energy_0.9"] = qk
        for spectrum in SPECTRA:  # no spectrum has a floor: not applicable
            row[f"{spectrum}_floor_aware"] = math.nan
        rows.append(row)
    return pd.DataFrame(rows)


def test_agreement_by_hand():
    a = agreement(heads_table(), TAUS)
    assert set(a["set"]) == {"with_knee"}  # no reliability columns: no resolved set
    a = a.set_index("column")
    qk = a.loc["qk_energy_0.9"]
    assert qk["heads"] == 3  # the head without a knee is left out
    assert qk["exact"] == pytest.approx(2 / 3) and qk["within1"] == pytest.approx(2 / 3)
    assert qk["mae"] == pytest.approx(2 / 3)  # |3-3|, |5-5|, |6-4|
    assert qk["spearman"] == pytest.approx(0.5)  # ranks (1, 2, 3) against (1, 3, 2)
    stable = a.loc["logit_stable"]  # 2.5 rounds to 3: exact on the knee-3 head only
    assert stable["exact"] == pytest.approx(1 / 3) and stable["within1"] == pytest.approx(2 / 3)
    assert math.isnan(stable["spearman"])  # a constant estimate orders nothing
    assert a.loc["qk_floor_aware", "heads"] == 0 and math.isnan(a.loc["qk_floor_aware", "exact"])
    assert a.loc["qk_floor_aware", "not_applicable"] == 3  # NaN where a knee exists


def test_every_estimator_against_the_nulls():
    t = heads_table()
    t["knee_resolved"] = [True, True, False, False]
    a = agreement(t, TAUS)
    assert set(a["set"]) == {"with_knee", "resolved"}
    w = a[a["set"] == "with_knee"].set_index("column")
    # loo median of knees (3, 5, 4): head 0 -> 4.5, head 1 -> 3.5, head 2 -> 4
    loo = w.loc["loo_median"]
    assert loo["mae"] == pytest.approx((1.5 + 1.5 + 0) / 3) and loo["exact"] == pytest.approx(1 / 3)
    qk = w.loc["qk_energy_0.9"]  # errors 0, 0, 2 against the guess's 1.5, 1.5, 0
    assert qk["loo_median_mae_null"] == pytest.approx(1.0)
    assert (qk["loo_median_wins"], qk["loo_median_losses"]) == (2, 1)
    assert qk["loo_median_p_sign"] == pytest.approx(0.5)
    assert math.isnan(loo["loo_median_p_wilcoxon"])  # a null is not compared with itself
    r = a[a["set"] == "resolved"].set_index("column")
    assert r.loc["qk_energy_0.9", "heads"] == 2


def test_knee_sensitivity_reads_the_curves_again():
    # one head: L(r) - L_full = 0.5, 0.03, 0.015, 0.004, 0 with gap 1
    curves = pd.DataFrame({"layer": 0, "head": 0, "r": range(5)})
    curves["delta"] = [0.5, 0.03, 0.015, 0.004, 0.0]
    table = pd.DataFrame({"layer": [0], "head": [0], "gap": [1.0]})
    s = knee_sensitivity(table, curves, [0.005, 0.01, 0.02, 0.05]).iloc[0]
    assert s[["knee_0.005", "knee_0.01", "knee_0.02", "knee_0.05"]].tolist() == [3, 3, 2, 1]


def test_the_summary_names_the_corpus_the_model_and_the_anchor():
    table = heads_table()
    facts = {
        "corpus": {
            "files_train": 9,
            "files_valid": 1,
            "bytes_train": 1000,
            "bytes_valid": 100,
            "sha256": "ab" * 32,
        },
        "shape": {"layers": 1, "heads": 4, "d_head": 8, "context": 16},
        "parameters": 1234,
        "train_wall_s": 10.0,
        "train_cpu_s": 9.0,
        "device": "cpu",
        "threads": 1,
        "valid_loss": 1.5,
        "python": "3.11.7",
    }
    md = summary_markdown(table, agreement(table, TAUS), facts)
    assert "PSF License" in md and "3.11.7" in md and "1,234 parameters" in md
    assert "3 of 4" in md and "2–11 components" in md and "no verdict" in md


def test_the_figures_draw():
    pytest.importorskip("matplotlib")
    from entropic_bound.heads.figure import figure_curve, figure_knees

    table = heads_table()
    fig = figure_knees(table, agreement(table, TAUS), TAUS)
    # three spectra × (two r_E + stable); the floor-aware rank is not applicable anywhere (no
    # spectrum has a floor), so it has no column
    assert len(fig.axes) == 3 * 3
    curve = pd.DataFrame({"step": [0, 10], "train_loss": [np.nan, 2.0], "valid_loss": [3, 2.5]})
    assert len(figure_curve(curve).axes) == 1
