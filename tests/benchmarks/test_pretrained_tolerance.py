"""benchmarks/pretrained_tolerance.py: its knees at H3's 1 % are the registered table's, read
back from the committed curves, and its removed share is the registered compression line."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))

import pretrained_tolerance as pt  # noqa: E402

REGISTERED = REPO / "benchmarks" / "registered" / "h3_pretrained"
NAMES = {"all-minilm-l6-v2": "minilm", "all-mpnet-base-v2": "mpnet"}


def test_the_knee_at_one_percent_is_the_registered_knee():
    heads = pd.read_csv(REGISTERED / "heads.csv")
    for stem, model in NAMES.items():
        k = pt.knees(pd.read_csv(pt.CURVES / f"{stem}.csv"), 0.01)
        mine = heads[heads["model"] == model].set_index(["layer", "head"])
        assert (k["plain"] == mine["knee_plain"]).all()
        assert (k["inputs_metric"] == mine["knee_inputs_metric"]).all()


def test_a_looser_tolerance_never_needs_more_rank():
    curves = pd.read_csv(pt.CURVES / "all-minilm-l6-v2.csv")
    tight, loose = pt.knees(curves, 0.01), pt.knees(curves, 0.1)
    assert (loose <= tight).all().all() and (loose < tight).any().any()
