"""``predict --json`` with H heads: every head's report carries its index, the top-level
``recommendation`` is one rank for every head, and the one-liners of docs/cli.md run on it
(and on a one-head report) as written."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

from entropic_bound.cli.main import main

DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def _one_liners() -> list[str]:
    """The python programs of docs/cli.md's ``--json | python -c '…'`` lines."""
    return re.findall(r"--json \| python -c '([^']+)'", DOC.read_text(encoding="utf-8"))


def _json(capsys, *argv) -> str:
    assert main([str(a) for a in argv] + ["--json"]) == 0
    return capsys.readouterr().out


def _heads_file(path: Path, H: int = 3, B: int = 256, n: int = 12, d: int = 4) -> Path:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((B, n, d))
    heads = []
    for h in range(H):  # linear attention, head h of rank h + 1
        U, _ = np.linalg.qr(rng.standard_normal((d, h + 1)))
        W, _ = np.linalg.qr(rng.standard_normal((d, h + 1)))
        A = U @ np.diag(np.linspace(1.0, 0.6, h + 1)) @ W.T  # every direction well above 1 %
        heads.append((X @ A @ X.transpose(0, 2, 1) / n) @ X)
    np.savez(path, X=X, Y=np.stack(heads, axis=1))
    return path


def test_every_head_report_has_its_index_and_the_top_is_one_rank(capsys, tmp_path):
    res = json.loads(_json(capsys, "predict", _heads_file(tmp_path / "h.npz"), "--no-static"))
    assert [h["head"] for h in res["heads"]] == [0, 1, 2]
    ranks = [h["recommendation"]["min_qk_rank"] for h in res["heads"]]
    assert ranks == [1, 2, 3]  # linear attention, n > d: exact
    top = res["recommendation"]
    assert top["min_qk_rank"] == 3 and top["head"] == 2
    assert [b["head"] for b in top["by_head"]] == [0, 1, 2]


def test_the_docs_one_liners_run_on_one_head_and_on_many(capsys, tmp_path):
    liners = _one_liners()
    assert len(liners) == 2
    many = _json(capsys, "predict", _heads_file(tmp_path / "h.npz"), "--no-static")
    one = _json(capsys, "predict", _heads_file(tmp_path / "h.npz"), "--no-static", "--head", "1")
    outs = []
    for text in (one, many):
        for code in liners:
            done = subprocess.run(
                [sys.executable, "-c", code], input=text, capture_output=True, text=True
            )
            outs.append((done.returncode, done.stdout.strip(), done.stderr[-300:]))
    top_one, _, top_many, per_head = outs
    assert top_one[:2] == (0, "2") and top_many[:2] == (0, "3")
    assert per_head[:2] == (0, "[(0, 1), (1, 2), (2, 3)]")


def test_a_torch_file_is_refused_by_name(capsys, tmp_path):
    """A .pt (torch.save's zip, or its legacy pickle) is one line, never its zip internals."""
    import torch

    for legacy in (False, True):
        path = tmp_path / f"data{int(legacy)}.pt"
        torch.save({"X": torch.zeros(2, 3, 4)}, path, _use_new_zipfile_serialization=not legacy)
        for argv in (["predict", path], ["inspect", path]):
            assert main([str(a) for a in argv]) == 2
            err = capsys.readouterr().err.strip()
            assert len(err.splitlines()) == 1 and "is a PyTorch file" in err, err
            assert "numpy.savez" in err and "data.pkl" not in err
