"""The measurement's guards: a model is measured on the corpus it was trained on, and on the
device the config names (docs/method.md §9)."""

from pathlib import Path

import pytest
import torch
import yaml

from entropic_bound.heads.measure import held_out_sets, measure_heads
from entropic_bound.heads.stage import resolve_device, train_heads

REPO = Path(__file__).resolve().parents[2]


def tiny() -> dict:
    from entropic_bound.config.heads import load_heads_config

    return load_heads_config(REPO / "config" / "heads_tiny.yaml")


def test_a_model_is_measured_only_on_its_own_corpus(tmp_path):
    cfg = tiny()
    train_heads(cfg, tmp_path / "m.pt", tmp_path / "c.csv", log=lambda line: None)
    other = {**cfg, "corpus": {**cfg["corpus"], "max_bytes": 50_000, "valid_share": 0.3}}
    with pytest.raises(ValueError, match="not the one the model was trained on"):
        measure_heads(other, tmp_path / "m.pt", tmp_path / "h.csv", tmp_path / "k.csv")
    assert not (tmp_path / "h.csv").exists()  # nothing half-written


def test_the_held_out_sets_are_disjoint_and_fixed():
    import numpy as np

    from entropic_bound.heads.corpus import Corpus

    cfg = tiny()  # 16 capture and 16 knee windows
    distinct = np.arange(250, dtype=np.uint8)  # every window's first token is its start
    corpus = Corpus(distinct, distinct, "", 1, 1, "")
    capture, knee = held_out_sets(cfg, corpus, 16)
    assert capture.shape == (16, 17) and knee.shape == (16, 17)
    starts_c, starts_k = set(capture[:, 0].tolist()), set(knee[:, 0].tolist())
    assert len(starts_c | starts_k) == 32 and not starts_c & starts_k
    assert max(starts_k) > 200 and min(starts_k) == 0  # both span the held-out text
    again = held_out_sets(cfg, corpus, 16)
    assert torch.equal(again[0], capture) and torch.equal(again[1], knee)


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_cuda_without_a_gpu_is_one_line():
    assert resolve_device("auto") == "cpu"
    with pytest.raises(ValueError, match="no CUDA GPU; use device auto or cpu"):
        resolve_device("cuda")


def test_the_shipped_tiny_config_is_what_the_test_reads():
    assert yaml.safe_load((REPO / "config" / "heads_tiny.yaml").read_text())["run_name"] == (
        "heads_tiny"
    )
