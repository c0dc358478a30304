"""``load_config`` on an overlay (the ``--configfile my.yaml`` the README recommends): merged
over config/config.yaml as Snakemake merges it, or one line saying how to pass a base."""

from __future__ import annotations

from pathlib import Path

import pytest

from entropic_bound.config.load import ConfigError, load_config, read_config

REPO = Path(__file__).resolve().parents[2]
PAPER = REPO / "config" / "config.yaml"


@pytest.mark.extras  # the default base is the checkout's config/config.yaml: a wheel has none
def test_an_overlay_is_merged_over_the_paper_config(tmp_path):
    over = tmp_path / "my.yaml"
    over.write_text("run_name: mine\nseed: 1\ntask:\n  d: 8\n")
    cfg = load_config(over)
    paper = read_config(PAPER)
    assert (cfg["run_name"], cfg["seed"], cfg["task"]["d"]) == ("mine", 1, 8)
    assert cfg["task"]["n"] == paper["task"]["n"]  # the rest of task: the paper's
    assert cfg["train"]["student_seeds"] == paper["train"]["student_seeds"]


def test_a_full_config_is_read_alone(tmp_path):
    assert load_config(PAPER)["run_name"] == read_config(PAPER)["run_name"]


def test_an_overlay_without_a_base_says_how_to_pass_one(tmp_path):
    over = tmp_path / "my.yaml"
    over.write_text("run_name: mine\n")
    with pytest.raises(ConfigError, match=r"is an overlay \(it lacks seed.*base="):
        load_config(over, base=tmp_path / "nothing.yaml")


@pytest.mark.extras  # merged over the checkout's config/config.yaml: a wheel has none
def test_a_bad_key_in_an_overlay_is_still_named(tmp_path):
    over = tmp_path / "my.yaml"
    over.write_text("run_name: mine\nseed: -1\n")
    with pytest.raises(ConfigError, match="seed"):
        load_config(over)
