"""`entropic-bound predict` / `inspect`: answers on tasks with a known r*, and one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from entropic_bound.cli.main import main
from entropic_bound.predict.attention import predict_attention_native
from entropic_bound.predict.static import predict_static
from entropic_bound.tasks.make import TaskSpec, make_task


def run(capsys, *argv):
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def run_json(capsys, *argv):
    rc, out, err = run(capsys, *argv, "--json")
    assert rc == 0, err
    return json.loads(out)


def assert_error(capsys, *argv, says: str):
    rc, out, err = run(capsys, *argv)
    assert rc == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("entropic-bound: error: ")
    assert "; " in lines[0]  # what is wrong; what to do
    assert says.lower() in lines[0].lower(), lines[0]
    assert "Traceback" not in err


def task_file(tmp_path, name="task.npz", **kw) -> tuple[Path, dict]:
    spec = TaskSpec(**{"seed": 0, "n_test": 16, **kw})
    arrays = make_task(spec)
    path = tmp_path / name
    np.savez(path, **arrays)
    return path, arrays


def xy_file(tmp_path, X, Y, name="xy.npz") -> Path:
    path = tmp_path / name
    np.savez(path, X=X, Y=Y)
    return path


@pytest.fixture(scope="module")
def l3(tmp_path_factory):
    """Linear attention, n > d (centred P_attn is exact), r* = 3."""
    return task_file(tmp_path_factory.mktemp("l3"), rung="L3", r_star=3, n=12, d=8, n_train=256)


# --------------------------------------------------------------------------- answers


def test_predict_linear_attention_recovers_r_star(capsys, l3):
    path, _ = l3
    res = run_json(capsys, "predict", path)
    rec = res["recommendation"]
    assert (rec["min_qk_rank"], rec["predictor"], rec["confidence"]) == (3, "P_attn", "exact")
    assert rec["estimator"] == "energy_0.99" and "col(A)" in rec["why"]
    assert res["input"]["task_meta"]["r_star"] == 3
    assert res["frontier"]["mixing"]["label"] == "linear-like"
    assert not res["frontier"]["conditioning"]["dominated"]
    # every predictor × estimator, the static-fit share and the frontier are all reported
    assert set(res["predictors"]) == {"P_attn", "P_static", "P_invert"}
    assert set(res["predictors"]["P_attn"]["estimates"]) == {
        "numerical",
        "stable",
        "entropy",
        "participation",
        "energy_0.9",
        "energy_0.95",
        "energy_0.99",
        "floor",  # the opt-in floor-aware rank: reported, never in the paper's tables
    }
    assert 0 < res["static_fit_share"] < 0.99  # linear attention is not static
    assert res["predictors"]["P_invert"]["status"].startswith("skipped")
    assert res["frontier"]["noise"]["sigma_hat"] < 1e-5  # σ = 0, n >= d + 2: the exact residual


def test_predict_text_report(capsys, l3):
    rc, out, err = run(capsys, "predict", l3[0])
    assert rc == 0 and err == ""
    for part in (
        "Rank estimates",
        "P_attn",
        "P_static",
        "Static-fit share:",
        "n vs d:",
        "noise:",
        "mixing: linear-like",
        "Recommended minimum QK rank: 3",
        "why:",
        "r_star = 3",
    ):
        assert part in out


def test_p_attn_matches_the_library(capsys, tmp_path):
    """The chunked, threaded accumulation is predict_attention_native (n < d, n = d, n > d), of
    the tokens in the data's scale X T where P_attn centres (n > d: T from their covariance)."""
    from entropic_bound.predict.datascale import centred_gram, data_scale_basis

    rng = np.random.default_rng(1)
    for n, d in ((4, 6), (6, 6), (9, 6)):
        X, Y = rng.standard_normal((2, 300, n, d))
        res = run_json(capsys, "predict", xy_file(tmp_path, X, Y), "--no-static")
        got = np.array(res["predictors"]["P_attn"]["spectrum"])
        T = data_scale_basis(centred_gram(X), 300 * n) if n > d else np.eye(d)
        want = predict_attention_native(X @ T, Y)["spectrum"]
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-7 * want[0])
        assert res["predictors"]["P_attn"]["centred"] == (n > d)


def test_chunks_and_worker_threads_do_not_change_the_answer(capsys, l3, monkeypatch):
    """Small chunks on 1 or 3 worker threads: batches merge in file order, so the floats are equal,
    and they agree with one big batch to rounding."""
    import torch

    import entropic_bound.predict.sources as sources

    whole = run_json(capsys, "predict", l3[0], "--no-static")["predictors"]["P_attn"]
    monkeypatch.setattr(sources, "CHUNK_ITEMS", 12 * 8 * 10)  # 10 sequences per chunk: 26 batches
    before = torch.get_num_threads()
    results = []
    try:
        for threads in (1, 3):
            torch.set_num_threads(threads)
            results.append(run_json(capsys, "predict", l3[0], "--no-static")["predictors"])
            assert torch.get_num_threads() == threads  # restored after the pass
    finally:
        torch.set_num_threads(before)
    assert results[0] == results[1]
    top = whole["spectrum"][0]
    np.testing.assert_allclose(
        results[0]["P_attn"]["spectrum"], whole["spectrum"], rtol=0, atol=1e-7 * top
    )  # sqrt(eig): rounding floor ~ sqrt(eps) s_1
    for name, value in whole["estimates"].items():  # integer ranks equal, real ones to rounding
        assert results[0]["P_attn"]["estimates"][name] == pytest.approx(value, rel=1e-6)


def test_static_task_trusts_p_static(capsys, tmp_path):
    for rung in ("L0", "L1"):  # linear and softmax static kernels
        path, arrays = task_file(tmp_path, rung=rung, r_star=2, n=6, d=6, n_train=300)
        res = run_json(capsys, "predict", path)
        rec = res["recommendation"]
        assert (rec["predictor"], rec["min_qk_rank"]) == ("P_static", 2)
        assert res["static_fit_share"] > 0.999
        assert res["predictors"]["P_static"]["softmax_kernel"] == (rung == "L1")
        share = predict_static(arrays["X_train"], arrays["Y_train"])["static_fit_share"]
        assert res["static_fit_share"] == pytest.approx(float(share), abs=1e-6)  # all 300 used


def test_targets_without_a_mixed_part_say_so(capsys, tmp_path):
    """Y = 0: rank 0, and the conditioning line says n/a (it named sequence -1 of 0 %)."""
    rng = np.random.default_rng(0)
    path = tmp_path / "zero.npz"
    np.savez(path, X=rng.standard_normal((64, 8, 4)), Y=np.zeros((64, 8, 4)))
    assert main(["predict", str(path)]) == 0
    out = capsys.readouterr().out
    assert "Recommended minimum QK rank: 0" in out
    assert "conditioning: n/a (P_attn's energy is zero" in out and "(-1)" not in out


def test_softmax_value_known_uses_p_invert(capsys, tmp_path):
    path, _ = task_file(tmp_path, rung="L4", r_star=2, n=6, d=8, n_train=200, value_map="known")
    res = run_json(capsys, "predict", path, "--value-known", "--no-static")
    rec = res["recommendation"]
    assert (rec["predictor"], rec["min_qk_rank"]) == ("P_invert", 2)
    assert res["frontier"]["mixing"]["label"] == "softmax-like"
    # without --value-known no predictor is reliable there, and the report says so
    rec = run_json(capsys, "predict", path, "--no-static")["recommendation"]
    assert (rec["predictor"], rec["confidence"]) == ("P_attn", "low")


def test_softmax_with_long_sequences_is_first_order(capsys, tmp_path):
    path, _ = task_file(tmp_path, rung="L4", r_star=2, n=16, d=8, n_train=128)
    res = run_json(capsys, "predict", path, "--no-static")
    assert res["frontier"]["mixing"]["label"] == "softmax-like"
    assert res["recommendation"]["confidence"] == "first-order"


def test_noise_estimate_and_noise_at_n_equal_d(capsys, tmp_path):
    path, _ = task_file(tmp_path, rung="L3", r_star=2, n=24, d=8, n_train=256, sigma=0.1)
    res = run_json(capsys, "predict", path, "--no-static")
    assert res["frontier"]["noise"]["sigma_hat"] == pytest.approx(0.1, rel=0.05)
    assert res["recommendation"]["min_qk_rank"] == 2
    # at n = d noise is amplified without bound: the report must not call the answer exact
    path, _ = task_file(tmp_path, rung="L3", r_star=2, n=8, d=8, n_train=256, sigma=0.1)
    res = run_json(capsys, "predict", path, "--no-static")
    assert res["frontier"]["conditioning"]["dominated"]
    assert res["recommendation"]["confidence"] == "unreliable"


def test_npy_pair_split_keys_and_compressed_agree(capsys, tmp_path, l3):
    path, arrays = l3
    np.save(tmp_path / "X.npy", arrays["X_test"])
    np.save(tmp_path / "Y.npy", np.asfortranarray(arrays["Y_test"]))  # Fortran order is read too
    np.savez_compressed(tmp_path / "c.npz", inputs=arrays["X_test"], targets=arrays["Y_test"])
    a = run_json(
        capsys, "predict", "--x", tmp_path / "X.npy", "--y", tmp_path / "Y.npy", "--no-static"
    )
    b = run_json(capsys, "predict", path, "--split", "test", "--no-static")
    c = run_json(
        capsys,
        "predict",
        tmp_path / "c.npz",
        "--x-key",
        "inputs",
        "--y-key",
        "targets",
        "--no-static",
    )
    assert a["input"]["B"] == 16
    for other in (b, c):
        assert other["predictors"]["P_attn"]["spectrum"] == a["predictors"]["P_attn"]["spectrum"]


def test_subsampling_and_budget_are_reported(capsys, l3):
    path, _ = l3
    res = run_json(capsys, "predict", path, "--attn-max-sequences", "50", "--static-max-size", "64")
    assert res["predictors"]["P_attn"]["sequences_used"] == 50
    assert any("50 of 256" in note for note in res["notes"])
    assert "static-max-size" in res["predictors"]["P_static"]["status"]
    assert res["static_fit_share"] is None
    again = run_json(
        capsys, "predict", path, "--attn-max-sequences", "50", "--static-max-size", "64"
    )
    assert again["predictors"] == res["predictors"]  # seeded: deterministic


@pytest.mark.extras
def test_plot(capsys, l3, tmp_path):
    png = tmp_path / "spectrum.png"
    rc, out, _ = run(capsys, "predict", l3[0], "--plot", png)
    assert rc == 0 and "spectrum plot written" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_without_matplotlib_is_one_line(capsys, l3, tmp_path, monkeypatch):
    """The library installed without its [plot] extra: --plot says what to install, exit 2,
    before any prediction runs, and writes nothing."""
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "matplotlib" else real(name, *a),
    )
    png = tmp_path / "spectrum.png"
    rc, out, err = run(capsys, "predict", l3[0], "--plot", png)
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "needs matplotlib" in err and "entropic-bound[plot]" in err
    assert not png.exists()


def test_inspect(capsys, l3):
    rc, out, err = run(capsys, "inspect", l3[0])
    assert rc == 0 and err == ""
    assert "X_train" in out and "(256, 12, 8)" in out and '"r_star": 3' in out
    res = run_json(capsys, "inspect", l3[0])
    rows = {a["name"]: a for a in res["arrays"]}
    assert rows["Y_test"]["shape"] == [16, 12, 8] and rows["X_train"]["nan"] == 0
    assert abs(rows["X_train"]["mean"]) < 0.05 and rows["X_train"]["std"] == pytest.approx(
        1, abs=0.05
    )
    assert res["meta"]["task_id"] == "L3_r3_s0"


# --------------------------------------------------------------------------- bad input


@pytest.fixture
def good():
    rng = np.random.default_rng(0)
    return rng.standard_normal((2, 40, 4, 3))


def test_error_missing_file(capsys, tmp_path):
    assert_error(capsys, "predict", tmp_path / "nope.npz", says="does not exist")
    assert_error(capsys, "inspect", tmp_path / "nope.npz", says="does not exist")


def test_error_unreadable_file(capsys, tmp_path, good):
    assert_error(capsys, "predict", tmp_path, says="is a directory")
    path = xy_file(tmp_path, *good)
    raw = path.read_bytes()
    (tmp_path / "cut.npz").write_bytes(raw[: len(raw) // 2])
    assert_error(capsys, "predict", tmp_path / "cut.npz", says="not a readable .npz")
    np.save(tmp_path / "X.npy", good[0])
    raw = (tmp_path / "X.npy").read_bytes()
    (tmp_path / "cut.npy").write_bytes(raw[: len(raw) - 100])
    assert_error(
        capsys, "predict", "--x", tmp_path / "cut.npy", "--y", tmp_path / "X.npy", says="truncated"
    )
    with zipfile.ZipFile(tmp_path / "junk.npz", "w") as zf:
        zf.writestr("X.npy", "not an array")
        zf.writestr("Y.npy", "nor this")
    assert_error(capsys, "predict", tmp_path / "junk.npz", says="not a valid .npy array")


def test_error_not_npz_or_npy(capsys, tmp_path, good):
    (tmp_path / "data.csv").write_text("1,2,3\n")
    assert_error(capsys, "predict", tmp_path / "data.csv", says="not a .npz or .npy file")
    (tmp_path / "empty.npz").write_bytes(b"")
    assert_error(capsys, "predict", tmp_path / "empty.npz", says="empty")
    np.save(tmp_path / "X.npy", good[0])
    assert_error(capsys, "predict", tmp_path / "X.npy", says="--x X.npy --y Y.npy")
    assert_error(
        capsys,
        "predict",
        "--x",
        xy_file(tmp_path, *good),
        "--y",
        tmp_path / "X.npy",
        says="is a .npz archive",
    )


def test_error_missing_keys(capsys, tmp_path, good):
    np.savez(tmp_path / "a.npz", inputs=good[0], targets=good[1])
    assert_error(capsys, "predict", tmp_path / "a.npz", says="has no X and Y arrays")
    np.savez(tmp_path / "b.npz", X=good[0])
    assert_error(capsys, "predict", tmp_path / "b.npz", says="has no Y array")
    assert_error(
        capsys, "predict", xy_file(tmp_path, *good), "--split", "test", says="no X_test and Y_test"
    )


def test_error_wrong_number_of_dimensions(capsys, tmp_path, good):
    path = xy_file(tmp_path, good[0][0], good[1][0])
    assert_error(capsys, "predict", path, says="has 2 dimensions")


def test_error_shapes_differ(capsys, tmp_path, good):
    # d_v may differ from d (Y [B, n, d_v]); the sequences and tokens may not
    path = xy_file(tmp_path, good[0], good[1][:, :3])
    assert_error(capsys, "predict", path, says="X has shape (40, 4, 3) but Y has shape (40, 3, 3)")


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_error_nan_or_inf(capsys, tmp_path, good, bad):
    X, Y = good.copy()
    Y[17, 2, 1] = bad
    assert_error(
        capsys,
        "predict",
        xy_file(tmp_path, X, Y),
        says="Y contains NaN or Inf (first in sequence 17)",
    )


def test_too_few_sequences_for_p_static_skips_it_with_a_note(capsys, tmp_path, good):
    """B = 11 < n·d = 12: P_static's least squares is under-determined, but P_attn needs far
    fewer sequences: the file is answered, P_static skipped with the reason, and a note."""
    path = xy_file(tmp_path, good[0][:11], good[1][:11])  # n*d = 12 unknowns
    res = run_json(capsys, "predict", path)
    status = res["predictors"]["P_static"]["status"]
    assert status.startswith("skipped") and "needs at least 12 sequences, got 11" in status
    assert res["static_fit_share"] is None
    assert any("P_attn needs far fewer" in note for note in res["notes"])
    assert res["predictors"]["P_attn"]["status"] == "ok"


def test_error_n_below_2(capsys, tmp_path, good):
    assert_error(
        capsys, "predict", xy_file(tmp_path, good[0][:, :1], good[1][:, :1]), says="n >= 2"
    )


@pytest.mark.extras
def test_error_other_bad_input(capsys, tmp_path, good):
    X, Y = good
    assert_error(capsys, "predict", xy_file(tmp_path, X + 1j, Y), says="not real numbers")
    X2 = X.copy()
    X2[5] = 1.0  # constant tokens: singular
    assert_error(
        capsys,
        "predict",
        xy_file(tmp_path, X2, Y),
        "--no-static",
        says="sequence 5 has linearly dependent",
    )
    assert_error(capsys, "predict", xy_file(tmp_path, X * 1e200, Y), says="overflow")
    path = xy_file(tmp_path, X, Y)
    assert_error(capsys, "predict", path, "--estimator", "rank", says="unknown estimator")
    assert_error(capsys, "predict", path, "--plot", tmp_path / "a.txt", says="unknown image type")
    assert_error(capsys, "predict", says="no input given")
    assert_error(capsys, "predict", "--x", tmp_path / "X.npy", says="--y is missing")
    rc, out, err = run(capsys, "predict", path, "--no-such-flag")  # argparse's own usage error
    assert rc == 2 and err.count("\n") == 1 and "Traceback" not in err


# --------------------------------------------------------------------------- no traceback, ever

finite = st.floats(allow_nan=False, allow_infinity=False, width=64)
values = st.one_of(finite, st.sampled_from([0.0, 1.0, np.nan, np.inf, -np.inf, 1e300, 1e-300]))


@st.composite
def arrays(draw):
    shape = tuple(draw(st.lists(st.integers(0, 5), min_size=0, max_size=4)))
    kind = draw(st.sampled_from(["float64", "float32", "int8", "bool", "normal", "normal"]))
    size = int(np.prod(shape))
    if kind == "normal":
        scale = 10.0 ** draw(st.integers(-200, 200))
        seed = draw(st.integers(0, 2**16))
        return np.random.default_rng(seed).standard_normal(shape) * scale
    vals = np.array(draw(st.lists(values, min_size=size, max_size=size)), dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):  # casting inf/nan to int8 is fine here
        return vals.reshape(shape).astype(kind)


@st.composite
def pairs(draw):
    X = draw(arrays())
    if draw(st.booleans()) and X.ndim == 3:  # often a valid shape with random values
        Y = np.random.default_rng(draw(st.integers(0, 99))).standard_normal(X.shape)
    else:
        Y = draw(arrays())
    return X, Y


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    xy=pairs(),
    flags=st.lists(st.sampled_from(["--value-known", "--no-static", "--json"]), unique=True),
    junk=st.one_of(st.none(), st.binary(max_size=64)),
)
def test_no_traceback_ever(tmp_path, capsys, xy, flags, junk):
    path = tmp_path / "h.npz"
    if junk is not None:
        path.write_bytes(junk)
    else:
        np.savez(path, X=xy[0], Y=xy[1])
    for argv in (["predict", str(path), *flags], ["inspect", str(path)]):
        rc = main(argv)  # any exception escaping here fails the test
        out, err = capsys.readouterr()
        assert rc in (0, 2)
        assert "Traceback" not in err and "internal error" not in err
        if rc == 2:
            assert err.count("\n") == 1 and err.startswith("entropic-bound: error: ")


# --------------------------------------------------------------------------- the real entry point


def test_console_script_subprocess(l3, tmp_path):
    script = Path(sys.executable).with_name("entropic-bound")
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "entropic_bound"]
    env = dict(os.environ, OMP_NUM_THREADS="2")
    ok = subprocess.run(
        cmd + ["predict", str(l3[0]), "--json"], capture_output=True, text=True, env=env
    )
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["recommendation"]["min_qk_rank"] == 3
    bad = subprocess.run(
        [sys.executable, "-m", "entropic_bound", "predict", str(tmp_path / "none.npz")],
        capture_output=True,
        text=True,
        env=env,
    )
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.startswith("entropic-bound: error: ") and "Traceback" not in bad.stderr
