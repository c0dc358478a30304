"""X3, the floor-aware rank beside r_E(0.99) (exploratory): the table on a tiny grid, the
pre-stated decision rule on fabricated rows (both ways), and the figure."""

import numpy as np
import pandas as pd
import pytest
import torch

from entropic_bound.config.load import ConfigError, load_run_config, validate
from entropic_bound.core.seeds import noisy_copy_rng
from entropic_bound.exploratory.floor_aware import (
    COLUMNS,
    FRONTIER,
    LADDER,
    floor_aware_decision,
    floor_aware_table,
    ladder_rows,
)
from entropic_bound.predict.attention import attention_native_pinv, attention_native_spectrum
from entropic_bound.predict.stage import data_only_spectra
from entropic_bound.tasks.grid import task_specs
from entropic_bound.tasks.make import make_task
from entropic_bound.tasks.stage import write_tasks

TINY_FRONTIER = {
    "classes": ["L3", "L4"],
    "value_maps": ["unknown"],
    "n": [4, 8],
    "d": 4,
    "sigma": [0.0, 0.01],
    "beta": [1.0],
    "r_star": [1, 2],
    "seeds": [0],
    "n_seqs": 128,
    "kappa": 2.0,
    "gain": 1.0,
}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    cfg = load_run_config("config/quick.yaml")
    cfg["frontier"] = dict(TINY_FRONTIER)
    cfg["exploratory"]["floor_aware"] = {
        "seeds": [10],
        "estimators": ["energy_0.99", "floor"],
        "ladder": True,
    }
    cfg["task"] = {**cfg["task"], "n": 4, "d": 4, "n_train": 128, "n_test": 16, "r_star": [1, 2]}
    cfg["task"]["rungs"], cfg["task"]["lambdas"] = ["L3", "L4"], []
    paths = write_tasks(cfg, None, tmp_path_factory.mktemp("tasks"))
    return cfg, floor_aware_table(cfg, clip=1e-12, spectra=data_only_spectra(cfg, paths))


@pytest.mark.extras
def test_the_ladder_reads_the_spectra_p_attn_gives_each_task(tmp_path):
    """The ladder's spectra are predict's P_attn rows: bitwise what P_attn makes of each task
    made afresh (the route X3's ladder took before it read them), so X3 is unchanged."""
    cfg = load_run_config("config/quick.yaml")
    cfg["task"] = {**cfg["task"], "n": 6, "d": 4, "n_train": 96, "n_test": 8, "r_star": [1, 3]}
    cfg["task"]["rungs"], cfg["task"]["lambdas"] = ["L0", "L2", "L4"], [0.5]
    spectra = data_only_spectra(cfg, write_tasks(cfg, None, tmp_path))
    ests = ["energy_0.99", "floor"]
    rows = ladder_rows(cfg, ests, spectra)
    specs = [s for s in task_specs(cfg) if s.rung != "L0"]
    sigmas = [0.0, *cfg["predict"]["noisy_sigmas"]]
    assert len(rows) == len(specs) * len(sigmas) * len(ests)
    for spec in specs:
        arrays = make_task(spec)
        X = torch.as_tensor(arrays["X_train"], dtype=torch.float64)[None]
        Y = np.asarray(arrays["Y_train"], dtype=np.float64)
        noise = noisy_copy_rng(cfg["seed"], spec.r_star, spec.seed).standard_normal(Y.shape)
        for sigma in sigmas:
            Ys = torch.as_tensor(Y + sigma * noise if sigma else Y)[None]
            fresh = attention_native_spectrum(attention_native_pinv(X), Ys).numpy()[0]
            at = spectra[
                (spectra["task_id"] == spec.task_id)
                & (spectra["sigma"] == sigma)
                & (spectra["predictor"] == "P_attn")
            ]
            assert np.array_equal(at["spectrum"].iloc[0], fresh)


@pytest.mark.extras
def test_a_ladder_without_its_spectra_is_refused(tiny):
    cfg, _ = tiny
    with pytest.raises(ValueError, match="reads the predict stage's spectra; none were given"):
        floor_aware_table(cfg, clip=1e-12)
    empty = pd.DataFrame(columns=["task_id", "sigma", "predictor", "spectrum"])
    with pytest.raises(ValueError, match="no P_attn spectrum of task L3_r1_s0 at σ = 0"):
        ladder_rows(cfg, ["floor"], empty)


@pytest.mark.extras
def test_table_columns_and_cases(tiny):
    cfg, x3 = tiny
    assert list(x3.columns) == COLUMNS
    front = x3[x3["spectra"] == FRONTIER]
    # L3 (no β) + L4 (one β), × n × σ × 2 estimators, P_attn; P_invert needs V known: none here
    assert len(front) == (1 + 1) * 2 * 2 * 2
    assert set(front["predictor"]) == {"P_attn"}
    assert (front["cases"] == 2).all()  # r* ∈ {1, 2} × one held-out seed
    ladder = x3[x3["spectra"] == LADDER]
    assert set(ladder["class"]) == {"L3", "L4"} and (ladder["cases"] == 2).all()
    assert x3["exact_rate"].between(0, 1).all()
    # linear attention at n > d, σ = 0 is exact under both estimators
    lin = front[(front["class"] == "L3") & (front["n"] == 8) & (front["sigma"] == 0)]
    assert (lin["exact_rate"] == 1).all()


def _rows(l4_floor: float, l3_floor: float) -> pd.DataFrame:
    base = {"spectra": FRONTIER, "value_map": "unknown", "predictor": "P_attn", "d": 16}
    rows = []
    for cls, rates in (("L4", (0.2, l4_floor)), ("L3", (1.0, l3_floor))):
        for est, rate in zip(("energy_0.99", "floor"), rates):
            for n in (16, 32):  # n = d is not pooled: its rate must not count
                r = rate if n > 16 else 1 - rate
                rows.append(
                    {**base, "class": cls, "n": n, "estimator": est, "cases": 10, "exact_rate": r}
                )
    return pd.DataFrame(rows).assign(sigma=0.0, beta=1.0, mean_abs_error=0.0)


def test_decision_rule_both_ways():
    yes = floor_aware_decision(_rows(0.9, 1.0))
    assert yes["adopt"] and yes["L4"] == {"energy_0.99": 0.2, "floor": 0.9}
    assert not floor_aware_decision(_rows(0.24, 1.0))["adopt"]  # below the 0.05 margin
    assert floor_aware_decision(_rows(0.25, 1.0))["adopt"]  # at it
    assert not floor_aware_decision(_rows(0.9, 0.97))["adopt"]  # costs linear attention 3 %


@pytest.mark.extras
def test_config_refuses_unknown_estimators_and_shared_seeds():
    cfg = load_run_config("config/quick.yaml")
    cfg["exploratory"]["floor_aware"]["estimators"] = ["energy_0.99", "gap"]
    with pytest.raises(ConfigError, match=r"floor_aware.estimators\[1\]': 'gap'"):
        validate(cfg)
    cfg = load_run_config("config/quick.yaml")
    cfg["exploratory"]["floor_aware"]["seeds"] = [0, 10]
    with pytest.raises(ConfigError, match=r"seeds \[0\] are the frontier's own"):
        validate(cfg)


@pytest.mark.extras
def test_x3_figure_renders(tiny, tmp_path):
    from entropic_bound.figures.draw import make_figure, save_figure

    fig = make_figure("X3", {"X3_floor_aware": tiny[1]}, {})
    assert fig.axes[0].get_xlabel() == "β (L4, n > d)"
    save_figure(fig, tmp_path / "x.png", tmp_path / "x.pdf", dpi=40)
    empty = make_figure("X3", {"X3_floor_aware": tiny[1].iloc[:0]}, {})
    assert any("no ladder rows" in t.get_text() for t in empty.axes[2].texts)


@pytest.mark.extras
def test_figure_names_the_sets_as_the_table_does():
    from entropic_bound.figures import x3_floor_aware as fig

    assert (fig.FRONTIER, fig.LADDER) == (FRONTIER, LADDER)


def test_both_routes_of_p_attn_give_the_same_ranks():
    """``exploratory.floor_aware.p_attn_sigma``: the noisy copies formed or by linearity agree
    to float64 rounding, so the integer ranks X3 reads are the same (every row, both
    estimators), with both value maps and P_invert in the grid."""
    from entropic_bound.exploratory.floor_aware import frontier_rows

    fcfg = {**TINY_FRONTIER, "value_maps": ["known", "unknown"], "sigma": [0.0, 0.01, 0.1]}
    rows = {
        route: frontier_rows(fcfg, [10, 11], 0, ["energy_0.99", "floor"], 1e-12, None, route)
        for route in ("formed", "linear")
    }
    assert len(rows["formed"]) > 0 and "P_invert" in set(rows["formed"]["predictor"])
    pd.testing.assert_frame_equal(rows["formed"], rows["linear"])
