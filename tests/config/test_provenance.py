"""Provenance stamps, provenance.json, the report's metadata and the partial claims (io.py)."""

import hashlib
import json

import pandas as pd
import pytest

from entropic_bound.config.provenance import provenance_rst, summarize_provenance
from entropic_bound.core.io import PARTIAL_DIR, clear_partial, sidecar, write_table, write_text

CFG = {
    "run_name": "t",
    "seed": 3,
    "task": {"seeds": [0]},
    "train": {"student_seeds": [0, 1]},
    "frontier": {"seeds": [0]},
}


def test_every_writer_stamps_its_file(tmp_path):
    prov = {"config_hash": "abc", "git_commit": "c0ffee", "rule": "claims"}
    write_table(pd.DataFrame({"a": [1]}), tmp_path / "t.csv", prov)
    write_text(tmp_path / "claims.md", "# x\n", prov)
    write_text(tmp_path / "plain.txt", "no stamp\n")
    for name in ("t.csv", "claims.md"):
        assert json.loads(sidecar(tmp_path / name).read_text()) == prov
    assert not sidecar(tmp_path / "plain.txt").exists()


def test_provenance_json_lists_each_artifact_with_its_stamp(tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "F1.png"
    write_table(
        pd.DataFrame({"x": [1, 2]}), a, {"config_hash": "h", "git_commit": "g", "rule": "r"}
    )
    b.write_bytes(b"png")
    sidecar(b).write_text(
        json.dumps(
            {"config_hash": "h", "git_commit": "g", "rule": "plot", "figure": "F1", "packages": {}}
        )
    )
    out = summarize_provenance(CFG, [a, b], tmp_path / "provenance.json")
    assert out["paper"] == "arXiv 2607.23050"
    assert json.loads((tmp_path / "provenance.json").read_text())["artifacts"] == out["artifacts"]
    assert out["artifacts"][str(b)] == {
        "sha256": hashlib.sha256(b"png").hexdigest(),
        "bytes": 3,
        "config_hash": "h",
        "git_commit": "g",
        "rule": "plot",
        "figure": "F1",
    }
    assert out["artifacts"][str(a)]["rule"] == "r"


def test_an_artifact_without_a_stamp_is_an_error_naming_it(tmp_path):
    bare = tmp_path / "F2.pdf"
    bare.write_bytes(b"%PDF")
    with pytest.raises(ValueError, match=r"F2\.pdf has no provenance sidecar"):
        summarize_provenance(CFG, [bare], tmp_path / "provenance.json")
    assert not (tmp_path / "provenance.json").exists()


def test_report_metadata_by_hand():
    summary = {
        "paper": "arXiv 2607.23050",
        "run_name": "paper",
        "config_hash": "2fe164fb5706",
        "git_commit": "b175cb9",
        "seed": 0,
        "packages": {"torch": "2.13.0", "numpy": "2.4.6"},
        "artifacts": {"a": {}, "b": {}},
    }
    assert provenance_rst(summary) == (
        ":Paper: arXiv 2607.23050\n"
        ":Run: ``paper``\n"
        ":Config hash: ``2fe164fb5706``\n"
        ":Git commit: ``b175cb9``\n"
        ":Base seed: 0\n"
        ":Packages: numpy 2.4.6, torch 2.13.0\n"
        ":Artifacts: 2, each with its sha256 and stamp in provenance.json\n"
    )


def test_clear_partial_removes_only_the_partial_claims(tmp_path):
    write_text(tmp_path / PARTIAL_DIR / "claims.md", "**Partial run**\n", {"rule": "onerror"})
    write_text(tmp_path / "claims.md", "complete\n")
    clear_partial(tmp_path)
    clear_partial(tmp_path)  # nothing to remove: no error
    assert not (tmp_path / PARTIAL_DIR).exists()
    assert (tmp_path / "claims.md").read_text() == "complete\n"


def test_a_stored_config_is_the_one_its_name_hashes(tmp_path):
    import yaml

    from entropic_bound.config.load import config_hash, load_config
    from entropic_bound.config.provenance import store_config

    cfg = load_config(__import__("pathlib").Path(__file__).parents[2] / "config" / "quick.yaml")
    path = store_config(cfg, tmp_path)
    assert path == tmp_path / "results" / cfg["run_name"] / "configs" / f"{config_hash(cfg)}.yaml"
    back = yaml.safe_load(path.read_text())
    assert back == cfg and config_hash(back) == config_hash(cfg)
    mtime = path.stat().st_mtime_ns
    assert store_config(cfg, tmp_path) == path and path.stat().st_mtime_ns == mtime  # once


def test_provenance_json_maps_each_hash_to_its_stored_config(tmp_path):
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "h1.yaml").write_text("seed: 0\n")
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    write_table(pd.DataFrame({"x": [1]}), a, {"config_hash": "h1", "git_commit": "g"})
    write_table(pd.DataFrame({"x": [1]}), b, {"config_hash": "h0", "git_commit": "g"})
    out = summarize_provenance(CFG, [a, b], tmp_path / "provenance.json")
    assert out["configs"] == {"h0": None, "h1": "configs/h1.yaml"}
