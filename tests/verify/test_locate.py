"""`entropic-bound verify` without --reference: the clone's reference, or, installed from a wheel
(no benchmarks/reference/ beside the package), one line that says where it is, exit 2."""

from __future__ import annotations

import pytest

from entropic_bound.cli.main import main
from entropic_bound.verify import locate
from entropic_bound.verify.tolerance import VerifyInputError


def test_a_clone_finds_its_reference_and_a_wheel_says_where_it_is():
    folder, tolerances = locate.default_reference()
    if folder.is_dir():
        assert locate.shipped_reference() == (folder, tolerances)
        assert (folder / "MANIFEST.json").is_file() and tolerances.is_file()
    else:  # make test-install: the installed wheel, no clone beside it
        with pytest.raises(VerifyInputError, match="--reference <clone>/benchmarks/reference"):
            locate.shipped_reference()


def test_without_a_clone_one_line_says_where_the_reference_is(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(locate, "REFERENCE_ROOT", tmp_path / "site-packages" / "none")
    (tmp_path / "run" / "tables").mkdir(parents=True)
    rc = main(["verify", str(tmp_path / "run")])
    out, err = capsys.readouterr()
    assert rc == 2 and out == "" and err.count("\n") == 1, (rc, out, err)
    assert err.startswith("entropic-bound: error: no shipped reference")
    assert "--reference <clone>/benchmarks/reference/paper" in err and "--tolerances" in err


def test_a_given_reference_needs_no_clone(tmp_path, monkeypatch, capsys):
    """--reference and --tolerances given: the missing default is never looked at."""
    folder, tolerances = locate.default_reference()
    monkeypatch.setattr(locate, "REFERENCE_ROOT", tmp_path / "none")
    (tmp_path / "run" / "tables").mkdir(parents=True)
    args = ["verify", str(tmp_path / "run"), "--reference", str(folder)]
    rc = main([*args, "--tolerances", str(tolerances)])
    _, err = capsys.readouterr()
    assert "no shipped reference" not in err and rc in (1, 2), (rc, err)
