"""Nested --config overrides: Snakemake leaves their scalars text; they are typed as YAML would."""

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from entropic_bound.config.load import ConfigError, check_workflow_config, load_config
from entropic_bound.config.overrides import typed, typed_overrides

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "text, value",
    [
        ("2.0e-2", 0.02),
        ("1e-3", 0.001),
        ("8", 8),
        ("-3", -3),
        (".5", 0.5),
        ("true", True),
        ("null", None),
        ("torch", "torch"),
        ("L4", "L4"),
        ("1.2.3", "1.2.3"),
        ("nan", "nan"),  # not a number word: the schema's finiteness check names it
    ],
)
def test_typed_by_hand(text, value):
    assert typed(text) == value and type(typed(text)) is type(value)


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_a_float_written_by_python_comes_back(x):
    assert typed(repr(x)) == x


def test_only_the_command_lines_nested_values_are_retyped():
    cfg = {
        "threads": 2,
        "train": {"classes": {"default": {"lr": "2.0e-2", "batch": 64}}, "backend": "torch"},
        "task": {"lambdas": ["0.25", "0.5"], "value_map": "unknown", "n": "16"},
    }
    over = {
        "train": {"classes": {"default": {"lr": "2.0e-2"}}, "backend": "torch"},
        "task": {"lambdas": ["0.25", "0.5"]},
    }
    assert typed_overrides(cfg, over) == ["train.classes.default.lr", "task.lambdas"]
    assert cfg["train"]["classes"]["default"] == {"lr": 0.02, "batch": 64}
    assert cfg["task"]["lambdas"] == [0.25, 0.5]
    assert cfg["task"]["n"] == "16"  # from a config file, not the command line: still refused


def test_the_workflow_check_accepts_the_nested_override_and_refuses_a_quoted_file_value():
    paper = REPO / "config" / "config.yaml"
    claims = REPO / "config" / "claims.yaml"
    cfg = load_config(paper)
    cfg["train"]["classes"]["default"]["lr"] = "2.0e-2"
    with pytest.raises(ConfigError, match="'2.0e-2' is not of type 'number'"):
        check_workflow_config(dict(cfg), [paper], claims)
    over = {"train": {"classes": {"default": {"lr": "2.0e-2"}}}}
    check_workflow_config(cfg, [paper], claims, over)
    assert cfg["train"]["classes"]["default"]["lr"] == 0.02


@pytest.mark.extras
def test_snakemake_dry_run_with_a_nested_override():
    """The command that failed before 611deb3 (2026-12-04) with "'2.0e-2' is not of type 'number'"."""
    smk = Path(sys.executable).with_name("snakemake")
    r = subprocess.run(
        [
            str(smk),
            "-n",
            "-s",
            str(REPO / "Snakefile"),
            "--config",
            'train={"classes":{"default":{"lr":2.0e-2}}}',
            "run_name=pytest_override",
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    assert "is not of type" not in r.stderr
