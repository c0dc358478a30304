"""Analyses on hand-made and fabricated tables: knees, static students, learned ranks, T2–T4."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).parents[1]))

from fabricate import fabricate, tail_energy, teacher_spectrum  # noqa: E402

import entropic_bound.analysis as A  # noqa: E402


def _student(
    rung="L3", r_star=2, rank=1, seed=0, R=0.1, cls=None, static=False, spectrum=(1.0,), task_seed=0
):
    return {
        "task_id": f"{rung}_r{r_star}_s{task_seed}",
        "rung": rung,
        "r_star": r_star,
        "task_seed": task_seed,
        "student_class": cls or rung,
        "static_student": static,
        "rank": rank,
        "seed": seed,
        "train_mse": R,
        "test_mse": R,
        "R": R,
        "R_theory": 0.0,
        "steps": 10,
        "converged": R <= 1e-3,
        "spectrum": list(spectrum),
    }


@pytest.fixture(scope="module")
def tables():
    return fabricate(rungs=("L0", "L1", "L2", "L3", "L4", "Lam0.50"))


def test_round_rank_is_half_up():
    assert A.round_rank([0.5, 1.49, 1.5, 2.5, 3.0]).tolist() == [1, 1, 2, 3, 3]


def test_exact_summary_rounds_for_matches_but_not_for_errors():
    s = A.exact_summary([1.4, 2.0, 3.6], [1, 2, 3])
    assert s["n"] == 3 and s["exact"] == 2
    assert s["exact_rate"] == pytest.approx(2 / 3)
    assert s["mean_abs_error"] == pytest.approx((0.4 + 0 + 0.6) / 3)
    assert np.isnan(A.exact_summary([], [])["exact_rate"])


def test_rung_order_is_the_ladder_with_l3_apart():
    assert A.sort_rungs(["L3", "Lam0.75", "L4", "L0", "Lam0.25", "L2", "L1"]) == [
        "L0",
        "L1",
        "L2",
        "Lam0.25",
        "Lam0.75",
        "L4",
        "L3",
    ]


def test_spearman():
    assert A.spearman([0, 0.5, 1], [3, 2, 1]) == pytest.approx(-1.0)
    assert A.spearman([0, 0.5, 1], [1, 5, 9]) == pytest.approx(1.0)
    assert np.isnan(A.spearman([0, 0.5, 1], [2, 2, 2]))


def test_knee_is_least_rank_with_median_risk_below_epsilon():
    # seeds disagree at rank 2 (median 0.0015 > ε); rank 3 is the first with median ≤ ε
    rows = [_student(rank=1, seed=s, R=0.2) for s in (0, 1)]
    rows += [_student(rank=2, seed=0, R=1e-4), _student(rank=2, seed=1, R=0.0029)]
    rows += [_student(rank=3, seed=s, R=1e-4) for s in (0, 1)]
    curves = A.risk_curves(pd.DataFrame(rows))
    assert curves.loc[curves["rank"] == 2, "R"].item() == pytest.approx(0.0015)
    knees = A.empirical_knees(curves, 1e-3)
    assert knees["r_emp"].item() == 3
    assert knees["R_at_r_star"].item() == pytest.approx(0.0015)


def test_no_knee_is_nan():
    curves = A.risk_curves(pd.DataFrame([_student(rank=r, R=0.5) for r in (1, 2, 3)]))
    assert np.isnan(A.empirical_knees(curves, 1e-3)["r_emp"].item())


def test_static_student_risk_is_min_over_classes_of_median_over_seeds():
    rows = [
        _student(rung="L4", rank=8, cls="L0", static=True, seed=s, R=r)
        for s, r in ((0, 0.4), (1, 0.6))
    ]
    rows += [
        _student(rung="L4", rank=8, cls="L1", static=True, seed=s, R=r)
        for s, r in ((0, 0.3), (1, 0.9))
    ]
    rows += [_student(rung="L4", rank=1, R=0.1)]  # own-class students do not count
    out = A.static_student_risk(A.risk_curves(pd.DataFrame(rows)))
    assert out["R_static_L0"].item() == pytest.approx(0.5)
    assert out["R_static_L1"].item() == pytest.approx(0.6)
    assert out["static_student_R"].item() == pytest.approx(0.5)


def test_static_student_falls_back_to_the_own_full_rank_student():
    rows = [_student(rung="L0", rank=r, R=0.2 if r == 1 else 1e-4) for r in (1, 2, 3)]
    rows += [_student(rung="L0", rank=3, cls="L1", static=True, R=0.05)]
    out = A.static_student_risk(A.risk_curves(pd.DataFrame(rows)))
    assert out["R_static_L0"].item() == pytest.approx(1e-4)
    assert out["static_student_R"].item() == pytest.approx(1e-4)


def test_learned_ranks_use_the_full_rank_student_only():
    spec = [1.0, 0.5, 1e-5, 0.0]
    rows = [_student(rank=4, spectrum=spec), _student(rank=1, spectrum=[1.0, 0, 0, 0])]
    lr = A.learned_ranks(pd.DataFrame(rows), taus=(0.99,))
    got = lr.set_index("estimator")["r_hat"]
    assert got["energy_0.99"] == 2 and got["numerical"] == 2
    assert got["stable"] == pytest.approx(1.25)
    assert set(lr["mixing"]) == {"linear"}


def test_rank_dynamics_follow_the_full_rank_student(tables):
    dyn = A.rank_dynamics(tables["train_dynamics"], "energy_0.99")
    assert set(dyn.columns) == {"task_id", "rung", "r_star", "seed", "step", "r_hat"}
    last = dyn.sort_values("step").groupby(["task_id", "seed"]).tail(1)
    assert (last["r_hat"] == last["r_star"]).all()


def test_intrinsic_ranks_t2(tables):
    t2 = A.intrinsic_ranks(
        tables["data_only_predictions"], "energy_0.99", tables["train_metrics"], 1e-3
    )
    assert len(t2) == t2["task_id"].nunique() == 6 * 3 * 2
    row = t2.set_index("task_id").loc["L0_r4_s1"]
    assert row["P_static"] == 4 and row["r_emp"] == 4 and row["static_fit_share"] == 1.0
    assert row["static_student_R"] == pytest.approx(1e-4 + 0.0005)
    assert t2.loc[t2["rung"] == "Lam0.50", "lambda"].unique().tolist() == [0.5]
    assert list(t2["rung"].drop_duplicates()) == ["L0", "L1", "L2", "Lam0.50", "L4", "L3"]
    without = A.intrinsic_ranks(tables["data_only_predictions"], "energy_0.99", None, 1e-3)
    assert without["r_emp"].isna().all()


def test_ladder_summary(tables):
    t2 = A.intrinsic_ranks(
        tables["data_only_predictions"], "energy_0.99", tables["train_metrics"], 1e-3
    )
    lad = A.ladder_summary(t2).set_index("rung")
    assert lad.loc["L0", "P_static_exact_rate"] == 1.0
    assert lad.loc["L4", "P_static_exact_rate"] == 0.0
    assert (
        lad.loc["L2", "static_fit_share"]
        > lad.loc["Lam0.50", "static_fit_share"]
        > lad.loc["L4", "static_fit_share"]
    )
    assert lad.loc["L0", "r_emp_exact_rate"] == 1.0


def test_estimator_table_t3(tables):
    lr = A.learned_ranks(tables["train_metrics"])
    t3 = A.estimator_table(lr, tables["data_only_predictions"])
    assert set(t3["kernels"]) == {"learned (full-rank student)", "data-only P_attn (σ = 0)"}
    assert set(t3["mixing"]) == {"linear", "softmax"}
    e = t3[(t3["kernels"].str.startswith("learned")) & (t3["estimator"] == "energy_0.99")]
    assert (e["exact_rate"] == 1.0).all() and (e["mean_abs_error"] == 0).all()
    only_data = A.estimator_table(None, tables["data_only_predictions"])
    assert set(only_data["kernels"]) == {"data-only P_attn (σ = 0)"}


def test_frontier_table_t4(tables):
    t4 = A.frontier_table(tables["frontier"])
    cell = t4[
        (t4["class"] == "L3")
        & (t4["value_map"] == "unknown")
        & (t4["predictor"] == "P_attn")
        & (t4["estimator"] == "energy_0.99")
        & (t4["n"] == 16)
        & (t4["sigma"] == 0.1)
    ]
    assert cell["exact_rate"].item() == 1.0 and cell["n_cases"].item() == 6
    assert t4.loc[t4["class"] == "L3", "beta"].isna().all()


def test_run_analyses_without_training(tables):
    out = A.run_analyses(tables["data_only_predictions"], None, None, "energy_0.99", 1e-3)
    assert out["risk_curves"].empty and out["learned_ranks"].empty
    assert len(out["T2_intrinsic_ranks"]) == 36


def test_missing_column_names_the_table(tables):
    with pytest.raises(ValueError, match="train_metrics lacks column.*spectrum"):
        A.risk_curves(tables["train_metrics"].drop(columns=["spectrum"]))


def test_fabricated_theory_matches_the_tail_energy():
    s = teacher_spectrum(4)
    assert tail_energy(s, 4) == 0.0
    assert tail_energy(s, 0) == 1.0


# --- the memo of the controls ---


def test_table_memo_answers_as_the_function_does_and_keeps_callers_apart():
    """Inside ``table_memo`` a second call with the same table is the first answer (a copy: a
    caller that changes its answer changes no other's), another table of equal content is asked
    afresh (tables are keyed by identity), and outside the block nothing is kept."""
    from entropic_bound.analysis import memo

    metrics = pd.DataFrame([_student(rank=r, R=0.5 / r) for r in (1, 2)])
    plain = A.risk_curves(metrics)
    calls = []
    with memo.table_memo():
        first = A.risk_curves(metrics)
        pd.testing.assert_frame_equal(first, plain)
        first["R"] = -1.0  # a caller scribbles on its answer
        again = A.risk_curves(metrics)
        pd.testing.assert_frame_equal(again, plain)
        calls.append(len(memo._MEMO))
        A.risk_curves(metrics.copy())  # equal content, another table: computed, not looked up
        calls.append(len(memo._MEMO))
        with memo.table_memo():  # nested: the same memo
            pd.testing.assert_frame_equal(A.risk_curves(metrics), plain)
        calls.append(len(memo._MEMO))
    assert calls == [1, 2, 2] and memo._MEMO is None
    pd.testing.assert_frame_equal(A.risk_curves(metrics), plain)


def test_table_memo_passes_unhashable_arguments_through():
    from entropic_bound.analysis import memo

    @memo.memoised
    def rows(df, extra):
        return df.assign(k=len(extra))

    df = pd.DataFrame({"a": [1]})
    with memo.table_memo():
        assert rows(df, [1, 2])["k"].tolist() == [2]
        assert rows(df, [1, 2, 3])["k"].tolist() == [3]
        assert memo._MEMO == {}


def test_t2_reads_the_tasks_own_noise(tables):
    """A run whose tasks carry noise σ has no σ = 0 predictions: T2 and the ladder are read at
    the tasks' σ (an empty T2 once left the ladder without columns and the figures failed)."""
    p = tables["data_only_predictions"]
    clean = p["sigma"] == 0
    noisy = p.assign(sigma=np.where(clean, 0.02, p["sigma"]))
    out = A.run_analyses(noisy, None, None, "energy_0.99", 1e-3, sigma=0.02)
    assert len(out["T2_intrinsic_ranks"]) == 36
    assert (out["T2_intrinsic_ranks"]["sigma"] == 0.02).all()
    empty = A.run_analyses(noisy, None, None, "energy_0.99", 1e-3)  # σ = 0: no such tasks
    assert empty["T2_intrinsic_ranks"].empty and empty["ladder"].empty
    assert "P_static_exact_rate" in empty["ladder"].columns  # written with its header
