"""Config validation: a wrong key or type fails at once, naming the key."""

import copy
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from entropic_bound.config import ConfigError, class_optim, config_hash, load_config, validate

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", ["config.yaml", "quick.yaml"])
def test_shipped_configs_validate(name):
    cfg = load_config(REPO / "config" / name)
    assert cfg["run_name"] in ("paper", "quick")


def test_claims_validate():
    load_config(REPO / "config" / "claims.yaml", schema="claims")


def _quick():
    return yaml.safe_load((REPO / "config" / "quick.yaml").read_text())


def test_unknown_key_is_named():
    cfg = _quick()
    cfg["task"]["n_trian"] = 5
    with pytest.raises(ConfigError, match="n_trian"):
        validate(cfg)


def test_wrong_type_is_named():
    cfg = _quick()
    cfg["task"]["d"] = "sixteen"
    with pytest.raises(ConfigError, match="task.d"):
        validate(cfg)


def test_missing_key_is_named():
    cfg = _quick()
    del cfg["frontier"]["n_seqs"]
    with pytest.raises(ConfigError, match="n_seqs"):
        validate(cfg)


def test_bad_claims_threshold_is_named():
    claims = yaml.safe_load((REPO / "config" / "claims.yaml").read_text())
    claims["C3"]["min_exact_rate"] = 1.5
    with pytest.raises(ConfigError, match="C3.min_exact_rate"):
        validate(claims, "claims")


def test_unreadable_config(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "none.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: [1, 2\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(bad)


def test_hash_is_order_independent_and_sensitive():
    a = _quick()
    b = dict(reversed(list(copy.deepcopy(a).items())))
    assert config_hash(a) == config_hash(b)
    b["seed"] = 1
    assert config_hash(a) != config_hash(b)


def test_class_optim_overrides_default():
    cfg = _quick()
    cfg["train"]["classes"]["L4"] = {"lr": 0.5}
    o = class_optim(cfg, "L4")
    assert o["lr"] == 0.5 and o["batch"] == cfg["train"]["classes"]["default"]["batch"]


def test_snakemake_rejects_a_bad_config_before_any_job(tmp_path):
    cfg = _quick()
    cfg["train"]["epsilonn"] = 1
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(cfg))
    smk = Path(sys.executable).with_name("snakemake")
    r = subprocess.run(
        [str(smk), "-n", "--configfile", str(bad)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode != 0
    assert "epsilonn" in r.stdout + r.stderr
