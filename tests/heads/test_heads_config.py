"""The heads config (config/heads*.yaml): validated by its schema and cross-key rules before
any job, one line naming the key; checked only when the heads study may run."""

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from entropic_bound.config.heads import heads_asked, load_heads_config
from entropic_bound.config.load import ConfigError

REPO = Path(__file__).resolve().parents[2]
SMK = str(Path(sys.executable).with_name("snakemake"))


@pytest.mark.parametrize("name", ["heads.yaml", "heads_tiny.yaml", "heads_gpu.yaml"])
def test_the_shipped_configs_are_valid(name):
    cfg = load_heads_config(REPO / "config" / name)
    assert cfg["run_name"].startswith("heads")
    assert cfg["model"]["heads"] * cfg["model"]["d_head"] >= 2


def tiny(**edits) -> dict:
    cfg = yaml.safe_load((REPO / "config" / "heads_tiny.yaml").read_text())
    for dotted, value in edits.items():
        *path, key = dotted.split(".")
        node = cfg
        for p in path:
            node = node[p]
        node[key] = value
    return cfg


def write(tmp_path, cfg) -> Path:
    path = tmp_path / "h.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def test_missing_keys_take_their_defaults(tmp_path):
    cfg = tiny()
    del cfg["measure"]["knee_fraction"], cfg["seed"]
    got = load_heads_config(write(tmp_path, cfg))
    assert got["measure"]["knee_fraction"] == 0.01 and got["seed"] == 0


@pytest.mark.parametrize(
    "edits, words",
    [
        ({"model.d_heads": 4}, ["model", "d_heads"]),  # a typo
        ({"model.d_head": 0}, ["model.d_head"]),
        ({"train.lr": -1.0}, ["train.lr"]),
        ({"device": "tpu"}, ["device"]),
        ({"run_name": "paper"}, ["run_name", "heads"]),
        ({"measure.knee_fraction": 1.0}, ["measure.knee_fraction"]),
        ({"train.warmup": 40}, ["train.warmup", "train.steps"]),
        ({"train.eval_every": 41}, ["train.eval_every", "train.steps"]),
        ({"measure.taus": [0.99, 0.9]}, ["measure.taus"]),
        ({"model.heads": 1, "model.d_head": 1}, ["model.heads", "model.d_head", "d_model"]),
        ({"corpus.source": "perl"}, ["corpus.source"]),
        ({"corpus.max_containment": 0.0}, ["corpus.max_containment"]),
        ({"train.schedule": "cosine"}, ["train.plateau_window", "train.schedule", "constant"]),
        ({"train.plateau_window": 10}, ["train.plateau_window", "train.eval_every"]),
        ({"measure.knee_sequences": 2}, ["measure.knee_sequences"]),
        ({"measure.floor_flatness": 1.5}, ["measure.floor_flatness"]),
    ],
)
def test_a_bad_key_is_one_line_naming_it(tmp_path, edits, words):
    path = write(tmp_path, tiny(**edits))
    with pytest.raises(ConfigError) as err:
        load_heads_config(path)
    msg = str(err.value)
    assert "\n" not in msg and str(path) in msg
    assert all(w in msg for w in words), msg


def test_a_duplicate_key_is_refused(tmp_path):
    path = tmp_path / "dup.yaml"
    path.write_text((REPO / "config" / "heads_tiny.yaml").read_text() + "seed: 1\n")
    with pytest.raises(ConfigError, match="heads config"):
        load_heads_config(path)


@pytest.mark.parametrize(
    "argv, cfg, asked",
    [
        (["snakemake", "heads", "--cores", "2"], {}, True),
        (["snakemake", "results/heads/tables/heads.csv"], {}, True),
        (["snakemake", "--cores", "2"], {}, False),
        (["snakemake", "reproduce-all", "--configfile", "config/heads.yaml"], {}, False),
        (["snakemake", "-n"], {"heads_config": "x.yaml"}, True),
        (["snakemake", "heads_measure"], {}, True),
        (["snakemake", "/abs/results/heads_gpu/heads.md"], {}, True),
        (["snakemake", "-s", "/work/wt-heads/Snakefile", "reproduce-all"], {}, False),
        (["snakemake", "results/paper/tables/heads_up.csv"], {}, False),
    ],
)
def test_which_command_lines_ask_for_the_study(argv, cfg, asked):
    assert heads_asked(argv, cfg) is asked


@pytest.mark.extras
def test_snakemake_stops_on_a_bad_heads_config_before_any_job(tmp_path):
    path = write(tmp_path, tiny(**{"model.layers": 0}))
    cmd = [SMK, "heads", "-n", "-s", str(REPO / "Snakefile"), "-d", str(tmp_path / "w")]
    r = subprocess.run(
        [*cmd, "--config", f"heads_config={path}"], capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 2
    errors = [line for line in r.stderr.splitlines() if line.startswith("entropic-bound")]
    assert len(errors) == 1 and "model.layers" in errors[0], r.stderr[-2000:]
    assert not (tmp_path / "w" / "results").exists()
    # a pipeline dry run (no heads target, no heads_config) never reads the heads config
    r = subprocess.run(
        [SMK, "-n", "-s", str(REPO / "Snakefile"), "-d", str(tmp_path / "w"), "--cores", "1",
         "--configfile", str(REPO / "config" / "quick.yaml")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
