"""The best-known bounds (docs/method.md §5b, "Best-known bounds"): the routes' minimum and its
route, NaN routes kept as NaN, v2's columns unchanged on a fabricated small run, the registered
starts, each problem kept at its best iterate, and the training job's saved factors, which
reproduce the student's R."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
import torch

from entropic_bound.bounds.best import BEST_COLUMNS, CANDIDATES, combine_routes, rung_best_bounds
from entropic_bound.bounds.optimise import BestIterate, BoundSettings, Problem, Start
from entropic_bound.bounds.population import population_bounds
from entropic_bound.bounds.stage import COLUMNS, rung_bounds
from entropic_bound.bounds.starts import random_start, registered_starts
from entropic_bound.tasks.grid import TaskSpec
from entropic_bound.tasks.make import make_task
from entropic_bound.tasks.mixing import apply_operator
from entropic_bound.train.factors import load_factors, save_factors

BEST = {
    "routes": ["population", "teacher", "random", "student", "students"],
    "ranks": "all",
    "n_random": 1,
    "static_iter": 30,
    "max_iter": 5,
    "grad_tol": 1e-9,
    "chunk": 8,
}


def _cfg(**best):
    return {
        "seed": 0,
        "task": {"n": 4, "d": 4},
        "bounds": {
            "ranks": "all",
            "deficiency_rungs": ["L0", "L3", "L4"],
            "n_seqs": 64,
            "max_iter": 5,
            "grad_tol": 1e-5,
            "chunk": 4,
            "best": {**BEST, **best},
        },
        "train": {
            "student_seeds": [0, 1],
            "init_scale": 1e-2,
            "epsilon": 1e-3,
            "checkpoints": 2,
            "tasks_per_job": 2,
            "backend": "torch",
            "classes": {
                "default": {"lr": 3e-2, "batch": 32, "max_steps": 60, "eval_every": 20}
                | {"patience": 2, "min_delta": 1e-3, "lr_decay": 0.3, "lr_drops": 1}
                | {"converge_at": 0.1, "chunk": 32}
            },
        },
        "device": "cpu",
    }


def _files(tmp_path, rung, r_stars=(2, 3), sigma=0.0):
    paths = []
    for r in r_stars:
        spec = TaskSpec(rung=rung, r_star=r, seed=0, n=4, d=4, n_train=128, n_test=128, sigma=sigma)
        path = tmp_path / f"{spec.task_id}.npz"
        np.savez(path, **make_task(spec))
        paths.append(path)
    return paths


def _row(**routes):
    base = {c: math.nan for c in CANDIDATES}
    return base | routes


def test_the_least_route_wins_and_names_itself():
    """Planted: a random start below the teacher's start; R_best takes it."""
    table = pd.DataFrame(
        [
            _row(R_bound=0.02, R_lbfgs_teacher=0.018, R_lbfgs_random=0.01, R_students=0.03),
            _row(R_bound=0.02, R_population=0.02),  # a tie goes to the earlier column
        ]
    )
    out = combine_routes(table)
    assert out["R_best"].tolist() == [0.01, 0.02]
    assert out["best_route"].tolist() == ["R_lbfgs_random", "R_bound"]
    assert out["spread"].tolist() == pytest.approx([3.0, 1.0])
    assert out["n_routes"].tolist() == [4, 2]


def test_a_nan_route_stays_nan_and_no_row_is_dropped():
    table = pd.DataFrame(
        [
            _row(R_bound=0.5, R_students=math.nan, R_lbfgs_student=math.inf),
            _row(),  # every route failed
        ]
    )
    out = combine_routes(table)
    assert len(out) == 2
    assert math.isnan(out.loc[0, "R_students"]) and out.loc[0, "R_best"] == 0.5
    assert out.loc[0, "n_routes"] == 1 and out.loc[0, "best_route"] == "R_bound"
    assert math.isnan(out.loc[1, "R_best"]) and math.isnan(out.loc[1, "spread"])
    assert out.loc[1, "best_route"] == "" and out.loc[1, "n_routes"] == 0


def test_the_best_iterate_is_kept_when_the_shared_steps_move_a_problem_off_it():
    """A problem that starts at its optimum (r = r*: R = 0) shares L-BFGS's scalars with one that
    does not; kept at its best iterate it stays at its start's risk."""
    spec = TaskSpec(rung="L1", r_star=3, seed=0, n=6, d=6, n_train=8, n_test=8)
    a = make_task(spec)
    meta = json.loads(str(a.pop("meta")))
    problems = [Problem(0, 3), Problem(0, 2, random_start(meta, 2, 0, 0))]
    from entropic_bound.bounds.population import _Population

    batch = _Population([(a, meta)], problems)
    start = batch.risks().detach().clone()
    best = BestIterate(batch.params())
    from entropic_bound.bounds import optimise

    optimise._lbfgs(batch, BoundSettings(None, 40, 1e-14, 8), best)
    best.restore(batch.params())
    after = batch.risks().detach()
    assert after[0] <= start[0] and after[1] <= start[1]
    assert torch.equal(after, best.risk) or torch.allclose(after, best.risk, rtol=1e-12)
    # and a population route at r* never reports worse than its teacher start
    rows = population_bounds([(a, meta)], problems, BoundSettings(None, 40, 1e-14, 8))
    assert abs(rows[0]["R"]) < 1e-12


def test_random_starts_are_seeded_by_task_rank_and_index():
    meta = {"task_id": "L1_r3_s0", "class": "L1", "n": 5, "d": 4, "gain": 1.0}
    a, b = random_start(meta, 2, 0, 0), random_start(meta, 2, 0, 0)
    assert np.array_equal(a.Q, b.Q) and np.array_equal(a.V, b.V)
    assert not np.array_equal(a.Q, random_start(meta, 2, 1, 0).Q)
    assert not np.array_equal(a.Q, random_start(meta, 2, 0, 1).Q)
    assert a.Q.shape == (5, 2) and a.V.shape == (4, 4)
    routes = [r for r, _ in registered_starts(meta, 2, {"teacher", "random"}, 3, 0, None)]
    assert routes == ["teacher", "random", "random", "random"]


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    """v2's bounds, a training job (with its saved factors) and the best bounds of L1 and L4."""
    from entropic_bound.train.stage import load_tasks, train_chunk

    tmp = tmp_path_factory.mktemp("best")
    cfg, out = _cfg(), {}
    for rung in ("L1", "L4"):
        paths = _files(tmp, rung)
        v2 = rung_bounds(cfg, paths)
        trained = train_chunk(cfg, rung, "sweep", load_tasks(paths), bounds=(v2, 0.5))
        save_factors(trained["factors"], tmp / f"{rung}.npz")
        factors = load_factors(tmp / f"{rung}.npz")
        best = rung_best_bounds(cfg, rung, paths, v2, factors, trained["metrics"])
        out[rung] = (paths, v2, trained, factors, best)
    return out


@pytest.mark.parametrize("rung", ["L1", "L4"])
def test_v2s_columns_are_kept_and_every_route_has_its_column(small_run, rung):
    paths, v2, trained, factors, best = small_run[rung]
    assert list(best.columns) == list(BEST_COLUMNS)
    pd.testing.assert_frame_equal(best[list(COLUMNS)], v2, check_exact=True)
    assert (best["n_routes"] >= 4).all()
    assert (best["R_best"] <= best["R_bound"]).all()
    routes = best[list(CANDIDATES)].to_numpy()
    np.testing.assert_array_equal(best["R_best"], np.nanmin(routes, axis=1))
    if rung == "L4":  # no population objective where the mixing reads the input
        assert best["R_population"].isna().all()
    else:
        assert best["R_population"].notna().all()
    # the students' route is the least test R of the trained students at that rank
    m = trained["metrics"]
    for row in best.itertuples():
        here = m[(m["task_id"] == row.task_id) & (m["rank"] == row.rank)]["R"]
        assert row.R_students == here.min()


def test_the_saved_factors_reproduce_the_students_r(small_run):
    """The factors a training job saves are the students' own: their R on the test split, in
    float64, is the metrics table's (float32 training arithmetic) to rounding."""
    for rung in ("L1", "L4"):
        paths, v2, trained, factors, _ = small_run[rung]
        assert set(zip(factors["task_id"], factors["rank"])) == set(zip(v2["task_id"], v2["rank"]))
        assert len(factors) == 2 * len(v2)  # two student seeds
        tasks = {p.stem: np.load(p) for p in paths}
        m = trained["metrics"].set_index(["task_id", "rank", "seed"])
        for row in factors.itertuples():
            z = tasks[row.task_id]
            meta = json.loads(str(z["meta"]))
            f64 = lambda x: torch.as_tensor(np.asarray(x), dtype=torch.float64)  # noqa: E731
            kernel = f64(row.Q) @ f64(row.K).T
            Y = apply_operator(rung, f64(z["X_test"]), kernel, f64(row.V), beta=meta["beta"])
            mse = float((Y - f64(z["Y_test"])).pow(2).mean())
            R = (mse - meta["sigma"] ** 2) / meta["test_clean_power"]
            assert R == pytest.approx(m.loc[(row.task_id, row.rank, row.seed), "R"], rel=1e-4)


def test_without_students_their_routes_are_nan_not_dropped(tmp_path):
    cfg = _cfg()
    paths = _files(tmp_path, "L2")
    v2 = rung_bounds(cfg, paths)
    best = rung_best_bounds(cfg, "L2", paths, v2, None, None)
    assert len(best) == len(v2)
    assert best["R_students"].isna().all() and best["R_lbfgs_student"].isna().all()
    assert best[["R_population", "R_lbfgs_teacher", "R_lbfgs_random"]].notna().all().all()
    # a route not asked for is NaN too; the knee alone leaves the other ranks' routes NaN
    cfg = _cfg(routes=["population"], ranks="knee")
    paths = _files(tmp_path, "L0", (3,))
    v2 = rung_bounds(cfg, paths)
    best = rung_best_bounds(cfg, "L0", paths, v2)
    assert best["R_lbfgs_teacher"].isna().all()
    assert best["R_population"].notna().tolist() == [False, True]  # ranks 1, 2 of r* = 3
    assert best.loc[1, "R_population"] == pytest.approx(best.loc[1, "R_bound"], rel=1e-12)


def test_training_tables_are_the_same_with_the_factors_kept(small_run):
    """Keeping the factors changes no number of the training tables."""
    from entropic_bound.train.stage import load_tasks, train_chunk

    paths, v2, trained, _, _ = small_run["L1"]
    plain = train_chunk(_cfg(), "L1", "sweep", load_tasks(paths), bounds=None)
    assert "factors" not in plain
    for name in ("metrics", "dynamics", "loss"):
        pd.testing.assert_frame_equal(plain[name], trained[name], check_exact=True, obj=name)


def test_a_start_with_its_own_value_map_is_taken_as_given():
    from entropic_bound.bounds.optimise import _Batch

    spec = TaskSpec(rung="L3", r_star=2, seed=0, n=4, d=4, n_train=16, n_test=16)
    a = make_task(spec)
    meta = json.loads(str(a.pop("meta")))
    s = Start(np.ones((4, 2)), 2 * np.ones((4, 2)), 3 * np.eye(4))
    batch = _Batch([(a, meta)], [Problem(0, 1, s), Problem(0, 2)], None)
    assert torch.equal(batch.Q[0, :, 0], torch.ones(4, dtype=torch.float64))
    assert torch.equal(batch.Q[0, :, 1], torch.zeros(4, dtype=torch.float64))  # beyond rank 1
    assert torch.equal(batch.V[0], 3 * torch.eye(4, dtype=torch.float64))
    assert torch.equal(batch.V[1], torch.as_tensor(a["V"], dtype=torch.float64))


def test_a_rank_search_with_restarts_keeps_one_factor_row_per_student():
    """train.ranks: search and restarts: the factors are those of the students the metrics
    keep, one row each."""
    from entropic_bound.train.engine import Optim
    from entropic_bound.train.search import train_by_search

    tasks = []
    for r in (2, 3):
        a = make_task(TaskSpec(rung="L3", r_star=r, seed=0, n=4, d=4, n_train=128, n_test=64))
        tasks.append((a, json.loads(str(a.pop("meta")))))
    optim = Optim(lr=3e-2, batch=32, max_steps=60, eval_every=20, restarts=1)
    kw = dict(epsilon=1e-3, init_scale=1e-2, device="cpu", backend="torch", factors=True)
    out = train_by_search(tasks, "L3", [0, 1], optim, k=4, **kw)
    key = lambda t: sorted(zip(t["task_id"], t["rank"], t["seed"]))  # noqa: E731
    assert key(out["factors"]) == key(out["metrics"])
    both = out["factors"].merge(out["metrics"], on=["task_id", "rank", "seed"])
    assert (both["restart_x"] == both["restart_y"]).all()
