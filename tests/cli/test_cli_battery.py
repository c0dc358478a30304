"""A battery of hostile input files for `entropic-bound predict` / `inspect`.

Every file is forged here (headers of every kind, zip members truncated, overlong, compressed,
encrypted, duplicated, damaged; special files; permissions; impossible sizes; hypothesis-drawn
headers). Each case asserts one of two outcomes: exit 2 with exactly one stderr line that names
the problem, no traceback and nothing written; or exit 0 with the correct answer (the one the
same arrays give from a plain numpy.savez file). main() runs in-process; one subprocess smoke
test writes a plot under a file-size limit.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import socket
import stat
import struct
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from entropic_bound.cli.main import ESTIMATORS, main
from entropic_bound.core.estimators import estimator_names

RNG = np.random.default_rng(7)
X0 = RNG.standard_normal((48, 6, 4))
Y0 = (X0 @ RNG.standard_normal((4, 4))) * 0.5 + 0.1 * RNG.standard_normal((48, 6, 4))


def npy_bytes(header: str, data: bytes = b"", version=(1, 0), pad: bool = True) -> bytes:
    """A .npy file with a forged header (``header``: the dict literal numpy would parse)."""
    h = header.encode("latin1")
    size = 4 if version[0] >= 2 else 2
    if pad:
        h += b" " * (63 - (6 + 2 + size + len(h)) % 64) + b"\n"
    return b"\x93NUMPY" + bytes(version) + len(h).to_bytes(size, "little") + h + data


def header(descr="'<f8'", fortran="False", shape="(48, 6, 4)") -> str:
    return f"{{'descr': {descr}, 'fortran_order': {fortran}, 'shape': {shape}, }}"


def good_npz(path: Path, compress=False, **extra) -> Path:
    (np.savez_compressed if compress else np.savez)(path, X=X0, Y=Y0, **extra)
    return path


def run(capsys, *argv):
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def listing(folder: Path) -> set:
    return {p.name for p in folder.iterdir()}


def assert_refused(capsys, folder: Path, *argv, says: str):
    before = listing(folder)
    rc, out, err = run(capsys, *argv)
    assert rc == 2, (rc, out[:300], err)
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("entropic-bound: error: "), err
    assert "; " in err and "Traceback" not in err and "internal error" not in err, err
    assert says.lower() in err.lower(), err
    assert listing(folder) == before  # nothing written


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    path = good_npz(tmp_path_factory.mktemp("ref") / "ref.npz")
    assert main(["predict", str(path), "--json", "--no-static"]) == 0
    return path


def assert_same_answer(capsys, reference, *argv):
    rc, out, err = run(capsys, *argv, "--json", "--no-static")
    assert rc == 0, err
    got = json.loads(out)
    main(["predict", str(reference), "--json", "--no-static"])
    want = json.loads(capsys.readouterr()[0])
    assert got["recommendation"] == want["recommendation"]
    np.testing.assert_allclose(
        got["predictors"]["P_attn"]["spectrum"],
        want["predictors"]["P_attn"]["spectrum"],
        rtol=1e-12,
    )


# --------------------------------------------------------------------------- forged .npy headers

Y_DATA = Y0.astype("<f8").tobytes()
X_DATA = X0.astype("<f8").tobytes()

NPY_REFUSED = {
    "negative dimension": (npy_bytes(header(shape="(-1, 6, 4)"), X_DATA), "impossible shape"),
    "bool dimension": (npy_bytes(header(shape="(True, 6, 4)"), X_DATA), "impossible shape"),
    "astronomic dimension": (
        npy_bytes(header(shape=f"({10**30}, 6, 4)"), X_DATA),
        "truncated",
    ),
    "overflowing product": (
        npy_bytes(header(shape=f"({2**62}, {2**62}, 4)"), X_DATA),
        "truncated",
    ),
    "float dimension": (npy_bytes(header(shape="(48.0, 6, 4)"), X_DATA), "not a valid .npy"),
    "shape not a tuple": (npy_bytes(header(shape="[48, 6, 4]"), X_DATA), "not a valid .npy"),
    "object dtype": (npy_bytes(header(descr="'|O'"), X_DATA), "not real numbers"),
    "structured dtype": (npy_bytes(header(descr="[('a', '<f8')]"), X_DATA), "not real numbers"),
    "complex dtype": (npy_bytes(header(descr="'<c16'", shape="(24, 6, 4)"), X_DATA), "not real"),
    "bytes dtype": (npy_bytes(header(descr="'|S8'"), X_DATA), "not real numbers"),
    "unknown dtype": (npy_bytes(header(descr="'<q9'"), X_DATA), "not a valid .npy"),
    "datetime dtype": (npy_bytes(header(descr="'<M8[s]'"), X_DATA), "not real numbers"),
    "fortran not a bool": (npy_bytes(header(fortran="'yes'"), X_DATA), "not a valid .npy"),
    "header not a dict": (npy_bytes("[1, 2, 3]", X_DATA), "not a valid .npy"),
    "header missing a key": (npy_bytes("{'descr': '<f8', 'shape': (48, 6, 4)}"), "not a valid"),
    "header extra key": (npy_bytes(header()[:-1] + "'x': 1}", X_DATA), "not a valid .npy"),
    "header syntax": (npy_bytes("{'descr': '<f8', 'shape': (48, ", X_DATA), "not a valid .npy"),
    "header code": (npy_bytes(header(shape="__import__('os')"), X_DATA), "not a valid .npy"),
    "header length past the end": (
        b"\x93NUMPY\x01\x00\xff\xff{'descr': '<f8'",
        "not a valid .npy",
    ),
    "header length 2 GB": (
        b"\x93NUMPY\x02\x00\xff\xff\xff\x7f" + b" " * 100,
        "not a valid .npy",
    ),
    "unknown version": (npy_bytes(header(), X_DATA, version=(9, 0)), "not a valid .npy"),
    "magic only": (b"\x93NUMPY", "not a valid .npy"),
    "data truncated": (npy_bytes(header(), X_DATA[:-8]), "truncated"),
    "no data": (npy_bytes(header()), "truncated"),
    "no sequences": (npy_bytes(header(shape="(0, 6, 4)")), "no sequences"),
    "no dimensions": (npy_bytes(header(shape="(48, 6, 0)")), "no dimensions"),
    "one token": (npy_bytes(header(shape="(48, 1, 4)"), X_DATA), "n >= 2"),
    "zero-d": (npy_bytes(header(shape="()"), X_DATA), "0 dimensions"),
    "four dimensions": (npy_bytes(header(shape="(48, 6, 4, 1)"), X_DATA), "4 dimensions"),
    "NaN": (
        npy_bytes(header(), X_DATA[:800] + struct.pack("<d", float("nan")) + X_DATA[808:]),
        "NaN or Inf",
    ),
    "empty file": (b"", "empty"),
    "text file": (b"1,2,3\n", "not a .npz or .npy file"),
}


@pytest.mark.parametrize("case", sorted(NPY_REFUSED))
def test_forged_npy_refused(capsys, tmp_path, case):
    raw, says = NPY_REFUSED[case]
    (tmp_path / "X.npy").write_bytes(raw)
    if case in ("no sequences", "no dimensions", "one token"):  # Y of the same odd shape
        (tmp_path / "Y.npy").write_bytes(raw)
    else:
        np.save(tmp_path / "Y.npy", Y0)
    argv = ["predict", "--x", tmp_path / "X.npy", "--y", tmp_path / "Y.npy", "--no-static"]
    assert_refused(capsys, tmp_path, *argv, says=says)
    rc, _, err = run(capsys, "inspect", tmp_path / "X.npy")  # inspect: a report or one line
    assert rc in (0, 2) and "Traceback" not in err and err.count("\n") == (rc == 2)


NPY_ANSWERED = {
    "big-endian": npy_bytes(header(descr="'>f8'"), X0.astype(">f8").tobytes()),
    "fortran order": npy_bytes(header(fortran="True"), np.asfortranarray(X0).tobytes("F")),
    "version 2.0": npy_bytes(header(), X_DATA, version=(2, 0)),
    "version 3.0": npy_bytes(header(), X_DATA, version=(3, 0)),
    "trailing bytes (numpy ignores them too)": npy_bytes(header(), X_DATA + b"junk" * 100),
    "unpadded header": npy_bytes(header() + "\n", X_DATA, pad=False),
}


@pytest.mark.parametrize("case", sorted(NPY_ANSWERED))
def test_unusual_npy_answered_correctly(capsys, tmp_path, reference, case):
    (tmp_path / "X.npy").write_bytes(NPY_ANSWERED[case])
    np.save(tmp_path / "Y.npy", Y0)
    assert_same_answer(
        capsys, reference, "predict", "--x", tmp_path / "X.npy", "--y", tmp_path / "Y.npy"
    )


# --------------------------------------------------------------------------- forged .npz members


def _zip(path: Path, members: list[tuple[str, bytes]], compress=zipfile.ZIP_STORED) -> Path:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # duplicate names are the point of one case
        with zipfile.ZipFile(path, "w", compress) as zf:
            for name, raw in members:
                zf.writestr(name, raw)
    return path


def _npy(a: np.ndarray) -> bytes:
    return npy_bytes(header(descr=repr(a.dtype.str), shape=repr(a.shape)), a.tobytes())


def _patch(raw: bytes, sig: bytes, which: int, offset: int, value: bytes) -> bytes:
    """Overwrite bytes at ``offset`` of the ``which``-th zip header starting with ``sig``."""
    at = -1
    for _ in range(which + 1):
        at = raw.index(sig, at + 1)
    return raw[: at + offset] + value + raw[at + offset + len(value) :]


LOCAL, CENTRAL = b"PK\x03\x04", b"PK\x01\x02"


def npz_cases(tmp: Path) -> dict:
    good = _zip(tmp / "g.npz", [("X.npy", _npy(X0)), ("Y.npy", _npy(Y0))]).read_bytes()
    comp_good = good_npz(tmp / "cg.npz", compress=True).read_bytes()
    overlong = npy_bytes(header(shape="(96, 6, 4)"), X_DATA)  # declares twice what it holds
    data_at = good.index(X_DATA[:64])
    cases = {
        "stored member read past its end into the next": (
            [("X.npy", overlong), ("Y.npy", _npy(Y0))],
            zipfile.ZIP_STORED,
            "truncated",
        ),
        "compressed member shorter than its header": (
            [("X.npy", overlong), ("Y.npy", _npy(Y0))],
            zipfile.ZIP_DEFLATED,
            "truncated",
        ),
        "duplicated member": (
            [("X.npy", _npy(X0)), ("X.npy", _npy(X0)), ("Y.npy", _npy(Y0))],
            zipfile.ZIP_STORED,
            "two members named X",
        ),
        "X and X.npy": (
            [("X.npy", _npy(X0)), ("X", _npy(X0)), ("Y.npy", _npy(Y0))],
            zipfile.ZIP_STORED,
            "two members named X",
        ),
        "member not an array": ([("X.npy", b"hello"), ("Y.npy", _npy(Y0))], 0, "not a valid"),
        "no members": ([], zipfile.ZIP_STORED, "has no X and Y"),
        "directories only": ([("X/", b""), ("Y/", b"")], zipfile.ZIP_STORED, "has no X and Y"),
    }
    out = {
        k: (_zip(tmp / f"{i}.npz", m, c).read_bytes(), s)
        for i, (k, (m, c, s)) in enumerate(cases.items())
    }
    out["flipped data byte (CRC-32)"] = (
        good[:data_at] + bytes([good[data_at] ^ 1]) + good[data_at + 1 :],
        "CRC-32",
    )
    out["encrypted"] = (
        _patch(_patch(good, LOCAL, 0, 6, b"\x01\x00"), CENTRAL, 0, 8, b"\x01\x00"),
        "encrypted",
    )
    out["central sizes beyond the archive"] = (
        _patch(good, CENTRAL, 0, 20, struct.pack("<II", 10**9, 10**9)),
        "does not hold",
    )
    out["compressed and stored sizes differ"] = (
        _patch(good, CENTRAL, 0, 20, struct.pack("<I", 100)),
        "does not hold",
    )
    out["declared size beyond any compression ratio (zip bomb)"] = (
        _patch(
            _patch(comp_good, LOCAL, 0, 22, struct.pack("<I", 4 * 10**9)),
            CENTRAL,
            0,
            24,
            struct.pack("<I", 4 * 10**9),
        ),
        "zip bomb",
    )
    # both sizes forged within deflate's ratio, the compressed one beyond the archive's end
    # (the ratio test alone trusted it: an 8 GB plan from a 200-byte file)
    forged = struct.pack("<II", 10**7, 4 * 10**9)
    out["compressed size beyond the archive"] = (
        _patch(_patch(comp_good, LOCAL, 0, 18, forged), CENTRAL, 0, 20, forged),
        "does not hold",
    )
    out["local name differs"] = (_patch(good, LOCAL, 0, 30, b"Z"), "disagree on its name")
    out["unknown compression method"] = (
        _patch(_patch(good, LOCAL, 0, 8, b"\x63\x00"), CENTRAL, 0, 10, b"\x63\x00"),
        "cannot be read",
    )
    out["archive cut in half"] = (good[: len(good) // 2], "not a readable .npz")
    out["archive cut before its end record"] = (good[:-10], "not a readable .npz")
    comp = good_npz(tmp / "c.npz", compress=True).read_bytes()
    at = comp.index(LOCAL, 4) - 40  # inside X's deflate stream
    out["damaged deflate stream"] = (comp[:at] + bytes(40) + comp[at + 40 :], "X in")
    fortran = np.asfortranarray(X0)
    out["compressed Fortran member"] = (
        _zip(
            tmp / "f.npz",
            [
                ("X.npy", npy_bytes(header(fortran="True"), fortran.tobytes("F"))),
                ("Y.npy", _npy(Y0)),
            ],
            zipfile.ZIP_DEFLATED,
        ).read_bytes(),
        "Fortran-ordered",
    )
    stored_fortran = _zip(
        tmp / "sf.npz",
        [("X.npy", npy_bytes(header(fortran="True"), fortran.tobytes("F"))), ("Y.npy", _npy(Y0))],
    ).read_bytes()
    at = stored_fortran.index(fortran.tobytes("F")[:64]) + 100  # strided rows: not read in order
    out["flipped data byte of a stored Fortran member (CRC-32)"] = (
        stored_fortran[:at] + bytes([stored_fortran[at] ^ 1]) + stored_fortran[at + 1 :],
        "CRC-32",
    )
    return out


NPZ_NAMES = [
    "stored member read past its end into the next",
    "compressed member shorter than its header",
    "duplicated member",
    "X and X.npy",
    "member not an array",
    "no members",
    "directories only",
    "flipped data byte (CRC-32)",
    "encrypted",
    "central sizes beyond the archive",
    "compressed and stored sizes differ",
    "declared size beyond any compression ratio (zip bomb)",
    "compressed size beyond the archive",
    "local name differs",
    "unknown compression method",
    "archive cut in half",
    "archive cut before its end record",
    "damaged deflate stream",
    "compressed Fortran member",
    "flipped data byte of a stored Fortran member (CRC-32)",
]


@pytest.fixture(scope="module")
def npz_raw(tmp_path_factory):
    cases = npz_cases(tmp_path_factory.mktemp("npz"))
    assert sorted(cases) == sorted(NPZ_NAMES)
    return cases


@pytest.mark.parametrize("case", NPZ_NAMES)
def test_forged_npz_refused(capsys, tmp_path, npz_raw, case):
    raw, says = npz_raw[case]
    (tmp_path / "d.npz").write_bytes(raw)
    assert_refused(capsys, tmp_path, "predict", tmp_path / "d.npz", "--no-static", says=says)
    rc, _, err = run(capsys, "inspect", tmp_path / "d.npz")
    assert rc in (0, 2) and "Traceback" not in err and err.count("\n") == (rc == 2)


def test_zip_bomb_refused_from_its_headers(capsys, tmp_path, monkeypatch):
    """A real bomb (zeros, bzip2: ~10,000:1) is refused from the sizes in its zip headers, never
    inflated (the free allowance lowered from 256 MiB, so that the file stays small)."""
    import entropic_bound.cli.npyio as npyio

    monkeypatch.setattr(npyio, "INFLATE_FREE", 1 << 20)
    zeros = npy_bytes(header(descr="'|u1'", shape="(65536, 8, 8)"), bytes(1 << 22))
    path = _zip(tmp_path / "b.npz", [("X.npy", zeros), ("Y.npy", zeros)], zipfile.ZIP_BZIP2)
    assert path.stat().st_size < 10_000
    assert_refused(capsys, tmp_path, "predict", path, "--no-static", says="over 100:1: a zip bomb")


def test_repetitive_deflate_member_within_deflates_ratio_is_read(tmp_path, monkeypatch):
    """Real data can compress several hundred to one (one-hot rows: ~300:1 at d = 256); only a
    claim beyond deflate's own ceiling (1032:1) is a lie (the free allowance lowered to 1 MiB)."""
    import entropic_bound.cli.npyio as npyio

    monkeypatch.setattr(npyio, "INFLATE_FREE", 1 << 20)
    onehot = np.zeros((4096, 4, 256), np.float32)
    onehot[..., 0] = 1.0
    path = tmp_path / "onehot.npz"
    np.savez_compressed(path, X=onehot)
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo("X.npy")
    assert 100 < info.file_size / info.compress_size < 1032  # the case this test is about
    _, refs = npyio.open_arrays(str(path))
    assert refs["X"].problem is None and refs["X"].shape == onehot.shape


def test_unusual_npz_answered_correctly(capsys, tmp_path, reference):
    fortran = npy_bytes(header(fortran="True"), np.asfortranarray(X0).tobytes("F"))
    huge_meta = npy_bytes(f"{{'descr': '<U{10**9}', 'fortran_order': False, 'shape': (), }}")
    files = {
        "deflate": good_npz(tmp_path / "c.npz", compress=True),
        "bzip2": _zip(
            tmp_path / "b.npz", [("X.npy", _npy(X0)), ("Y.npy", _npy(Y0))], zipfile.ZIP_BZIP2
        ),
        "lzma": _zip(
            tmp_path / "l.npz", [("X.npy", _npy(X0)), ("Y.npy", _npy(Y0))], zipfile.ZIP_LZMA
        ),
        "stored Fortran member": _zip(
            tmp_path / "f.npz", [("X.npy", fortran), ("Y.npy", _npy(Y0))]
        ),
        "forged huge meta (never read)": _zip(
            tmp_path / "m.npz", [("X.npy", _npy(X0)), ("Y.npy", _npy(Y0)), ("meta.npy", huge_meta)]
        ),
        "meta not JSON": good_npz(tmp_path / "j.npz", meta=np.array("{not json")),
        "unreadable extra member": _zip(
            tmp_path / "e.npz", [("X.npy", _npy(X0)), ("Y.npy", _npy(Y0)), ("Z.npy", b"junk")]
        ),
    }
    for name, path in files.items():
        assert_same_answer(capsys, reference, "predict", path)
        rc, out, err = run(capsys, "inspect", path)
        assert rc == 0 and err == "", (name, err)


# --------------------------------------------------------------------------- special files


@pytest.fixture
def alarm():
    """Fail instead of hanging: a blocked open() would otherwise stop the whole suite."""

    def boom(*_):
        raise TimeoutError("hung")

    old = signal.signal(signal.SIGALRM, boom)
    signal.alarm(20)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


def test_special_files_refused_without_hanging(capsys, tmp_path, alarm):
    os.mkfifo(tmp_path / "fifo.npz")
    assert_refused(capsys, tmp_path, "predict", tmp_path / "fifo.npz", says="FIFO")
    assert_refused(capsys, tmp_path, "inspect", tmp_path / "fifo.npz", says="FIFO")
    np.save(tmp_path / "Y.npy", Y0)
    assert_refused(
        capsys,
        tmp_path,
        "predict",
        "--x",
        tmp_path / "fifo.npz",
        "--y",
        tmp_path / "Y.npy",
        says="--x",
    )
    assert_refused(capsys, tmp_path, "predict", "/dev/null", says="character device")
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(tmp_path / "s.npz"))
        assert_refused(capsys, tmp_path, "predict", tmp_path / "s.npz", says="socket")
    finally:
        sock.close()
    assert_refused(capsys, tmp_path, "predict", tmp_path, says="is a directory")
    assert_refused(capsys, tmp_path, "predict", tmp_path / "Y.npy" / "x.npz", says="does not exist")
    os.symlink(tmp_path / "gone.npz", tmp_path / "dangling.npz")
    assert_refused(capsys, tmp_path, "predict", tmp_path / "dangling.npz", says="does not exist")


@pytest.mark.parametrize("x_scale, y_scale", [(1.0, 1e-200), (1.0, 1e-160), (1e120, 1e-60)])
def test_scales_beyond_float64_refused_not_answered(capsys, tmp_path, x_scale, y_scale):
    """Y ~ 1e-200 (or X ≫ Y) made C = Σ Z Zᵀ underflow to 0 and the answer rank 0: refused."""
    np.savez(tmp_path / "s.npz", X=X0 * x_scale, Y=Y0 * y_scale)
    assert_refused(capsys, tmp_path, "predict", tmp_path / "s.npz", says="rescale X and Y")


@pytest.mark.parametrize("x_scale, y_scale", [(1e48, 1e-48), (1e-48, 1e48), (1e-40, 1e-40)])
def test_scales_inside_the_range_answered_as_unit_scale(capsys, tmp_path, x_scale, y_scale):
    np.savez(tmp_path / "s.npz", X=X0 * x_scale, Y=Y0 * y_scale)
    rc, out, err = run(capsys, "predict", tmp_path / "s.npz", "--json")
    assert rc == 0, err
    got = json.loads(out)["recommendation"]
    np.savez(tmp_path / "u.npz", X=X0, Y=Y0)
    assert main(["predict", str(tmp_path / "u.npz"), "--json"]) == 0
    want = json.loads(capsys.readouterr()[0])["recommendation"]
    assert (got["min_qk_rank"], got["predictor"]) == (want["min_qk_rank"], want["predictor"])


def test_symlink_answered(capsys, tmp_path, reference):
    os.symlink(reference, tmp_path / "link.npz")
    assert_same_answer(capsys, reference, "predict", tmp_path / "link.npz")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_file_refused(capsys, tmp_path):
    path = good_npz(tmp_path / "d.npz")
    path.chmod(0)
    try:
        assert_refused(capsys, tmp_path, "predict", path, says="permission")
    finally:
        path.chmod(stat.S_IRUSR | stat.S_IWUSR)


# --------------------------------------------------------------------------- sizes and memory


def test_d_beyond_memory_is_refused_with_the_figure(capsys, tmp_path, monkeypatch):
    import entropic_bound.predict.scan as scan

    monkeypatch.setattr(scan, "available_memory", lambda: 8 * 10**9)
    np.savez(
        tmp_path / "wide.npz",
        X=np.ones((1, 2, 40000), np.float32),
        Y=np.ones((1, 2, 40000), np.float32),
    )
    assert os.path.getsize(tmp_path / "wide.npz") < 700_000
    assert_refused(
        capsys,
        tmp_path,
        "predict",
        tmp_path / "wide.npz",
        "--no-static",
        says="d = 40000 needs ≈ 12.8 GB for P_attn's d × d sums",
    )


def test_memory_bound_is_a_function_of_n_d_and_subsamples():
    from entropic_bound.predict.scan import Settings, make_plan

    a = make_plan(Settings(no_static=True), 10**6, 64, 64).memory
    b = make_plan(Settings(no_static=True), 10**3, 64, 64).memory
    assert a == b and a["P_attn"] < 10**9  # flat in B
    assert make_plan(Settings(), 10**5, 16, 16).memory["P_static"] < 2 * 10**8


# --------------------------------------------------------------------------- options


@pytest.mark.parametrize(
    "flags, says",
    [
        (["--seed", "-1"], "--seed -1"),
        (["--seed", "abc"], "argument --seed"),
        (["--static-max-size", "0"], "--static-max-size 0"),
        (["--static-oversample", "-2"], "--static-oversample -2"),
        (["--invert-max-sequences", "0"], "--invert-max-sequences 0"),
        (["--attn-max-sequences", "-5"], "--attn-max-sequences -5"),
        (["--estimator", "energy_2"], "--estimator 'energy_2'"),
        (["--estimator", "rank"], "--estimator 'rank'"),
        (["--plot", "out.txt"], "--plot out.txt"),
        (["--plot", "no/such/dir/a.png"], "--plot no/such/dir/a.png"),
        (["--split", "val"], "argument --split"),
    ],
)
def test_every_option_named_in_its_error(capsys, tmp_path, reference, flags, says, monkeypatch):
    monkeypatch.chdir(tmp_path)
    before = listing(tmp_path)
    rc, out, err = run(capsys, "predict", reference, *flags)
    assert rc == 2 and out == "" and err.count("\n") == 1 and says in err, err
    assert listing(tmp_path) == before


@pytest.mark.extras
def test_plot_directory_refused(capsys, tmp_path, reference):
    (tmp_path / "p.png").mkdir()
    assert_refused(
        capsys, tmp_path, "predict", reference, "--plot", tmp_path / "p.png", says="directory"
    )


@pytest.mark.extras
@pytest.mark.parametrize("fmt", ["png", "pdf", "svg", "eps"])
def test_plot_failing_midway_leaves_nothing(capsys, tmp_path, reference, monkeypatch, fmt):
    """A write that fails partway (disk full) leaves no truncated image, in any format."""
    from matplotlib.figure import Figure

    real = Figure.savefig

    def full_disk(self, fname, **kw):
        real(self, fname, **kw)
        Path(fname).write_bytes(Path(fname).read_bytes()[:100])
        raise OSError(28, "No space left on device", str(fname))

    monkeypatch.setattr(Figure, "savefig", full_disk)
    assert_refused(
        capsys,
        tmp_path,
        "predict",
        reference,
        "--plot",
        tmp_path / f"s.{fmt}",
        says="No space left",
    )


def test_plot_under_a_real_file_size_limit(capsys, tmp_path, reference):
    """The kernel refuses writes beyond 2,000 bytes (RLIMIT_FSIZE): a real failing write."""
    out = tmp_path / "plots"
    out.mkdir()
    old_handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    old_limit = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (2000, old_limit[1]))
    try:
        rc = main(["predict", str(reference), "--plot", str(out / "s.pdf")])
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, old_limit)
        signal.signal(signal.SIGXFSZ, old_handler)
    out_text, err = capsys.readouterr()
    assert rc == 2 and out_text == "" and err.count("\n") == 1 and "Traceback" not in err, err
    assert list(out.iterdir()) == []


KILLED_WHILE_PLOTTING = """
import os, signal, sys
from pathlib import Path
from matplotlib.figure import Figure
from entropic_bound.cli.main import main

def killed(self, fname, **kw):  # half an image on disk, then SIGTERM (or SIGHUP) arrives
    Path(fname).write_bytes(b"half an image")
    os.kill(os.getpid(), getattr(signal, sys.argv[1]))

Figure.savefig = killed
# the signal's default action, whatever this test runs under (nohup or a CI runner may ignore
# SIGHUP, and an ignored signal is left alone by the CLI)
signal.signal(getattr(signal, sys.argv[1]), signal.SIG_DFL)
sys.exit(main(sys.argv[2:]))
"""


@pytest.mark.extras
@pytest.mark.parametrize("sig", ["SIGTERM", "SIGHUP"])
def test_terminated_while_plotting_leaves_nothing(tmp_path, reference, sig):
    """SIGTERM/SIGHUP (a job killed, a terminal closed) clean up like Ctrl-C: no temporary
    image is left beside the target, one line, exit 128 + the signal."""
    out = tmp_path / "plots"
    out.mkdir()
    argv = ["predict", str(reference), "--no-static", "--plot", str(out / "s.png")]
    res = subprocess.run(
        [sys.executable, "-c", KILLED_WHILE_PLOTTING, sig, *argv],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 128 + getattr(signal, sig), (res.returncode, res.stderr)
    # ours only: matplotlib may add a line of its own on a fresh machine (its font cache)
    ours = [line for line in res.stderr.splitlines() if line.startswith("entropic-bound")]
    assert res.stdout == "" and len(ours) == 1, res.stderr
    assert ours[0].startswith("entropic-bound: error: interrupted"), res.stderr
    assert "Traceback" not in res.stderr, res.stderr
    assert list(out.iterdir()) == []


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_stdout_on_a_full_disk_is_one_line(tmp_path, reference):
    """The answer itself cannot be written (stdout on a full disk): one line and exit 2, not a
    traceback when the interpreter flushes stdout at exit."""
    for argv in (["inspect", str(reference)], ["inspect", str(reference), "--json"]):
        with open("/dev/full", "w") as full:
            res = subprocess.run(
                [sys.executable, "-m", "entropic_bound", *argv],
                stdout=full,
                stderr=subprocess.PIPE,
                text=True,
                timeout=120,
            )
        assert res.returncode == 2, res.stderr
        assert res.stderr.count("\n") == 1 and "Traceback" not in res.stderr, res.stderr
        assert "cannot write the answer to standard output" in res.stderr, res.stderr


def test_help_lists_the_estimators_and_examples(capsys):
    assert ESTIMATORS == ", ".join(estimator_names(opt_in=True))
    assert main(["predict", "--help"]) == 0
    out = capsys.readouterr()[0]
    assert "examples:" in out and "recommend_rank" in out
    assert main(["--version"]) == 0 and capsys.readouterr()[0].startswith("entropic-bound ")


# --------------------------------------------------------------------------- hypothesis headers

descrs = st.sampled_from(
    [
        "'<f8'",
        "'>f4'",
        "'<f2'",
        "'|b1'",
        "'<i8'",
        "'|O'",
        "'<c8'",
        "'|V8'",
        "'<U3'",
        "'x'",
        "None",
        "[('a', '<f8')]",
    ]
)
dims = st.one_of(st.integers(-3, 60), st.integers(2**31, 2**70), st.just(True))
shapes = st.one_of(
    st.lists(dims, max_size=4).map(lambda s: repr(tuple(s))), st.sampled_from(["[1]", "'a'", "(1,"])
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    descr=descrs,
    fortran=st.sampled_from(["False", "True", "1", "'no'"]),
    shape=shapes,
    version=st.sampled_from([(1, 0), (2, 0), (3, 0), (1, 1)]),
    n_bytes=st.integers(0, 3000),
    in_npz=st.booleans(),
    compress=st.booleans(),
)
def test_hypothesis_headers_never_crash(
    capsys, tmp_path, descr, fortran, shape, version, n_bytes, in_npz, compress
):
    raw = npy_bytes(
        header(descr, fortran, shape),
        bytes(range(256)) * (n_bytes // 256) + bytes(n_bytes % 256),
        version,
    )
    if in_npz:
        path = _zip(
            tmp_path / "h.npz",
            [("X.npy", raw), ("Y.npy", raw)],
            zipfile.ZIP_DEFLATED if compress else 0,
        )
        argvs = [["predict", path, "--no-static"], ["inspect", path]]
    else:
        path = tmp_path / "h.npy"
        path.write_bytes(raw)
        argvs = [["predict", "--x", path, "--y", path, "--no-static"], ["inspect", path]]
    for argv in argvs:
        rc, out, err = run(capsys, *argv)
        assert rc in (0, 2), err
        assert "Traceback" not in err and "internal error" not in err, err
        if rc == 2:
            assert out == "" and err.count("\n") == 1 and err.startswith("entropic-bound: error: ")


# ---------------------------------------- members shorter than their headers (41b6b6d, 2026-12-04)


def _short_member(tmp: Path, compress) -> Path:
    """X's .npy header declares 96 rows, its member holds the 48 of X0; Y0 follows."""
    forged = npy_bytes(header(shape="(96, 6, 4)"), X0.tobytes())
    return _zip(tmp / f"short{compress}.npz", [("X.npy", forged), ("Y.npy", _npy(Y0))], compress)


def _member_taking_the_next(tmp: Path) -> Path:
    """X's sizes (local and central, CRC-32 recomputed) forged to run on over Y's header and
    data, with its .npy header declaring the rows those bytes would make: a reader that trusts
    the sizes reads Y's zip header as X's numbers."""
    import struct
    import zlib

    big = npy_bytes(header(shape="(60, 6, 4)"), X0.tobytes())
    path = _zip(tmp / "overlap.npz", [("X.npy", big), ("Y.npy", _npy(Y0))])
    raw = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as zf:
        ix, iy = zf.infolist()
    start = ix.header_offset + 30 + len("X.npy")
    size = iy.header_offset + 30 + len("Y.npy") + iy.file_size - start
    crc = zlib.crc32(bytes(raw[start : start + size]))
    struct.pack_into("<III", raw, ix.header_offset + 14, crc, size, size)
    central = raw.index(b"PK\x01\x02")
    struct.pack_into("<III", raw, central + 16, crc, size, size)
    path.write_bytes(bytes(raw))
    return path


@pytest.mark.parametrize("case", ["stored", "deflated", "sizes forged over the next member"])
def test_inspect_refuses_a_member_shorter_than_its_header(capsys, tmp_path, case):
    """Before: inspect listed X as "unreadable" (or, with forged sizes, read Y's bytes as X's
    rows and printed their statistics) and exited 0."""
    path = {
        "stored": lambda: _short_member(tmp_path, zipfile.ZIP_STORED),
        "deflated": lambda: _short_member(tmp_path, zipfile.ZIP_DEFLATED),
        "sizes forged over the next member": lambda: _member_taking_the_next(tmp_path),
    }[case]()
    says = "belong to member Y.npy" if case.startswith("sizes") else "truncated"
    assert_refused(capsys, tmp_path, "inspect", path, says=says)
    assert_refused(capsys, tmp_path, "inspect", path, "--json", says=says)
    assert_refused(capsys, tmp_path, "predict", path, "--no-static", says=says)
