"""Teacher tasks: shapes, determinism, kernel spectra, the shared ladder."""

import json

import numpy as np
import pytest

from entropic_bound.tasks.files import load_task
from entropic_bound.tasks.make import TaskSpec, make_task

SMALL = dict(n=6, d=4, n_train=64, n_test=32)


@pytest.mark.parametrize("rung", ["L0", "L1", "L2", "Lam0.50", "L3", "L4"])
def test_shapes_and_meta(rung):
    t = make_task(TaskSpec(rung=rung, r_star=2, seed=0, **SMALL))
    for k in ("X_train", "Y_train"):
        assert t[k].shape == (64, 6, 4) and t[k].dtype == np.float32
    assert t["X_test"].shape == (32, 6, 4)
    meta = json.loads(str(t["meta"]))
    assert meta["class"] == rung and meta["r_star"] == 2 and meta["n"] == 6
    k = 6 if rung in ("L0", "L1") else 4
    assert t["kernel"].shape == (k, k)
    s = np.linalg.svd(t["kernel"].astype(np.float64), compute_uv=False)
    assert np.sum(s > 1e-5 * s[0]) == 2  # rank r*
    np.testing.assert_allclose(s[:2] / s[0], [1.0, 0.5], rtol=1e-5)  # linspace(1, 1/κ, 2)


def test_kernel_norms_set_the_output_variance():
    # L0: Var(Y) = ‖M‖_F²/n = g² exactly in expectation. L3: E[(XᵀX/n)²] = (1 + (d+1)/n) I, so
    # Var(Y) = g²(1 + (d+1)/n) ≈ 2.06 g² at n = d = 16 (docs/method.md's "≈ g²" up to O(1))
    def var(rung):
        t = make_task(TaskSpec(rung=rung, r_star=4, seed=1, n=16, d=16, n_train=2048, n_test=16))
        return float(t["Y_train"].astype(np.float64).var())

    assert var("L0") == pytest.approx(1.0, rel=0.05)
    assert var("L3") == pytest.approx(1 + 17 / 16, rel=0.1)


def test_deterministic_and_seed_dependent():
    a = make_task(TaskSpec(rung="L4", r_star=2, seed=3, **SMALL))
    b = make_task(TaskSpec(rung="L4", r_star=2, seed=3, **SMALL))
    c = make_task(TaskSpec(rung="L4", r_star=2, seed=4, **SMALL))
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert not np.array_equal(a["X_train"], c["X_train"])


def test_ladder_rungs_share_kernel_and_inputs():
    l2 = make_task(TaskSpec(rung="L2", r_star=2, seed=0, **SMALL))
    l4 = make_task(TaskSpec(rung="L4", r_star=2, seed=0, **SMALL))
    np.testing.assert_array_equal(l2["kernel"], l4["kernel"])
    np.testing.assert_array_equal(l2["X_train"], l4["X_train"])
    assert not np.array_equal(l2["Y_train"], l4["Y_train"])


def test_value_known_is_identity():
    t = make_task(TaskSpec(rung="L3", r_star=1, seed=0, value_map="known", **SMALL))
    np.testing.assert_array_equal(t["V"], np.eye(4, dtype=np.float32))


def test_bad_rank_and_rung():
    with pytest.raises(ValueError, match="r\\*"):
        make_task(TaskSpec(rung="L3", r_star=5, seed=0, **SMALL))
    with pytest.raises(ValueError, match="unknown rung"):
        make_task(TaskSpec(rung="L9", r_star=1, seed=0, **SMALL))


def test_load_task_errors(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        load_task(tmp_path / "nope.npz")
    bad = tmp_path / "bad.npz"
    bad.write_text("not a zip")
    with pytest.raises(ValueError, match="not a readable"):
        load_task(bad)
    partial = tmp_path / "partial.npz"
    np.savez(partial, X_train=np.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match="lacks"):
        load_task(partial)


def test_task_pair_takes_make_task_dicts_and_pairs_and_refuses_the_rest():
    import json

    import numpy as np
    import pytest

    from entropic_bound.tasks.make import task_pair

    meta = {"r_star": 2}
    arrays = {"X_train": np.zeros(1), "meta": np.array(json.dumps(meta))}
    got_arrays, got_meta = task_pair(arrays)
    assert got_meta == meta and set(got_arrays) == {"X_train"}
    pair = ({"X_train": np.zeros(1)}, meta)
    assert task_pair(pair) is pair
    with pytest.raises(ValueError, match="a task is"):
        task_pair([1, 2, 3])
