"""`snakemake pretrained_study` end to end on two tiny models (a BERT folder and a GGUF decoder)
captured on the pinned corpus: capture, measure, H3's evaluator (a registration naming the tiny
models' weights), the tables, the figure and SHA256SUMS."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml
from test_heads_command import encoder, sha, tiny_decoder

from entropic_bound.pretrained.corpus import CORPORA

REPO = Path(__file__).resolve().parents[2]
SMK = str(Path(sys.executable).with_name("snakemake"))
CORPUS_SHA256 = "40842dedbec28576c463cfeeb71ead96c2055e45cfb8c8c2c565633002c2bb0c"


def test_the_study_runs_from_capture_to_verdicts(tmp_path):
    pytest.importorskip("gguf")
    root, files = CORPORA["common-licenses"]
    if not all((Path(root) / name).is_file() for name in files):
        pytest.skip(f"{root} does not hold the corpus (not a Debian system)")
    models = tmp_path / "models"
    bert = encoder(models, name="bert-tiny")
    (models / "dec-tiny").mkdir()
    gguf = tiny_decoder(models / "dec-tiny")
    entry = {"packages": ["none"], "version": "0", "unpack": "written by the test", "windows": 8}
    cfg = {
        "run_name": "pretrained_heads_test",
        "models_dir": str(models),
        "corpus": "common-licenses",
        "corpus_sha256": CORPUS_SHA256,
        "registration": str(tmp_path / "h3.yaml"),
        "models": {
            "bert-tiny": entry | {"file": "model.safetensors", "window": 8},
            "dec-tiny": entry | {"file": gguf.name, "window": 12},
        },
    }
    cfg["models"]["bert-tiny"]["sha256"] = sha(bert / "model.safetensors")
    cfg["models"]["dec-tiny"]["sha256"] = sha(gguf)
    reg = yaml.safe_load((REPO / "config" / "heads_claims_h3.yaml").read_text())
    reg["models"]["minilm"]["sha256"] = cfg["models"]["bert-tiny"]["sha256"]
    reg["models"]["smollm2"]["sha256"] = cfg["models"]["dec-tiny"]["sha256"]
    (tmp_path / "h3.yaml").write_text(yaml.safe_dump(reg))
    (tmp_path / "cfg.yaml").write_text(yaml.safe_dump(cfg))
    work = tmp_path / "work"
    work.mkdir()
    cmd = [SMK, "pretrained_study", "--cores", "1", "-s", str(REPO / "Snakefile"), "-d", str(work)]
    cmd += ["--config", f"pretrained_heads_config={tmp_path / 'cfg.yaml'}"]
    r = subprocess.run(cmd, cwd=work, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    out = work / "results" / "pretrained_heads_test"
    heads = pd.read_csv(out / "heads.csv")
    assert sorted(heads["model"].unique()) == ["minilm", "smollm2"]
    assert len(heads) == 2 * 2 + 2 * 4 and heads["registered"].all()
    assert (heads["y_recompute_rel"] < 1e-5).all()
    verdicts = pd.read_csv(out / "verdicts.csv")
    tests = verdicts[verdicts["test"] != "eligibility"]
    assert set(tests["verdict"]) == {"inconclusive"}  # a handful of heads, not 30 a model
    for line in (out / "SHA256SUMS").read_text().splitlines():
        digest, name = line.split()
        assert hashlib.sha256((out / name).read_bytes()).hexdigest() == digest
    assert "## Verdicts" in (out / "report.md").read_text()
