"""config/pretrained_heads.yaml: the shipped file valid, its weight digests the ones the model
tests pin, its corpus digest the joined text of the pinned files, and every bad key one line."""

from pathlib import Path

import pytest
import yaml

from entropic_bound.config.load import ConfigError
from entropic_bound.config.pretrained_heads import load_pretrained_heads, pretrained_asked

REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / "config" / "pretrained_heads.yaml"
ENV = {"ENTROPIC_BOUND_PRETRAINED_DIR": "/models"}


def test_the_shipped_config_names_three_models_by_package_and_sha256():
    cfg = load_pretrained_heads(SHIPPED, ENV)
    assert cfg["models_dir"] == "/models" and cfg["corpus"] == "common-licenses"
    digests = {name: m["sha256"] for name, m in cfg["models"].items()}
    assert digests == {
        "all-minilm-l6-v2": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
        "all-mpnet-base-v2": "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658",
        "smollm2-135m-instruct": "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    }
    assert {m["window"] for m in cfg["models"].values()} == {128, 256}
    assert all(m["layers"] == "all" for m in cfg["models"].values())


def test_the_corpus_digest_is_the_joined_text_of_the_pinned_files():
    import hashlib

    from entropic_bound.pretrained.corpus import CORPORA, corpus_files, read_texts

    root, files = CORPORA["common-licenses"]
    if not all((Path(root) / name).is_file() for name in files):
        pytest.skip(f"{root} does not hold the corpus (not a Debian system)")
    text, _ = read_texts([p for p, _ in corpus_files("common-licenses")])
    want = yaml.safe_load(SHIPPED.read_text())["corpus_sha256"]
    assert hashlib.sha256(text.encode()).hexdigest() == want


@pytest.mark.parametrize(
    "change, says",
    [
        ({"corpus": "wiki"}, "key 'corpus'"),
        ({"corpus_sha256": "ABC"}, "key 'corpus_sha256': must be a SHA-256"),
        ({"models": {"all-minilm-l6-v2": {"sha256": "0"}}}, "models.all-minilm-l6-v2.sha256"),
        ({"models": {"all-minilm-l6-v2": {"layers": "0;1"}}}, "must be all, or layer numbers"),
        ({"models": {"all-minilm-l6-v2": {"file": "a/b"}}}, "weight file's name"),
        ({"run_name": "paper"}, "starts with 'pretrained_heads'"),
        ({"batch": 0}, "key 'batch'"),
    ],
)
def test_a_bad_key_is_one_line_naming_it(tmp_path, change, says):
    doc = yaml.safe_load(SHIPPED.read_text())
    for key, value in change.items():
        if key == "models":
            for name, fields in value.items():
                doc["models"][name].update(fields)
        else:
            doc[key] = value
    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(ConfigError, match=says) as err:
        load_pretrained_heads(path, ENV)
    assert "\n" not in str(err.value)


def test_no_models_folder_is_one_line():
    with pytest.raises(ConfigError, match="ENTROPIC_BOUND_PRETRAINED_DIR is not set"):
        load_pretrained_heads(SHIPPED, {})


@pytest.mark.parametrize(
    "argv, cfg, asked",
    [
        (["snakemake", "pretrained_capture"], {}, True),
        (["snakemake", "-n", "results/pretrained_heads/x/capture"], {}, True),
        (["snakemake", "reproduce-all"], {}, False),
        (["snakemake"], {"pretrained_heads_config": "p.yaml"}, True),
    ],
)
def test_only_its_own_targets_read_the_config(argv, cfg, asked):
    assert pretrained_asked(argv, cfg) is asked
