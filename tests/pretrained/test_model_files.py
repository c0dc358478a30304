"""A model's folder and config.json: every missing file, missing or wrong field, unsupported
family and weight that does not fit the config is one PretrainedError of one line, which the
command line prints as one error line (exit 2)."""

import copy
import json

import pytest
import torch
from tiny import BERT, MPNET, encoder_tensors, write_model

from entropic_bound.cli.main import error_line
from entropic_bound.pretrained import PretrainedError, encoder_config, find_model, load_model
from entropic_bound.pretrained.config import SIZES


def one_line(exc: PretrainedError) -> str:
    text = str(exc)
    assert "\n" not in text
    return text


def test_a_tiny_bert_and_mpnet_folder_load(tmp_path):
    for cfg in (BERT, MPNET):
        model = load_model(write_model(tmp_path / cfg["model_type"], cfg))
        assert model.files.format == "safetensors"
        assert (model.cfg.d_model, model.cfg.heads, model.cfg.d_head) == (8, 2, 4)
        assert len(model.blocks) == 2


def test_defaults_are_the_reference_implementations(tmp_path):
    cfg = {
        k: v
        for k, v in BERT.items()
        if k not in {"layer_norm_eps", "hidden_act", "type_vocab_size"}
    }
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    c = encoder_config(tmp_path / "config.json")
    assert (c.eps, c.act, c.type_vocab, c.buckets) == (1e-12, "gelu", 2, 0)


@pytest.mark.parametrize(
    "field",
    [*SIZES, "model_type"],
)
def test_a_missing_field_is_named(tmp_path, field):
    cfg = {k: v for k, v in BERT.items() if k != field}
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(PretrainedError, match=f"config.json: {field} is missing") as err:
        encoder_config(tmp_path / "config.json")
    assert error_line(err.value) == f"entropic-bound: error: {one_line(err.value)}"


@pytest.mark.parametrize(
    "cfg, why",
    [
        ({"hidden_size": "8"}, "hidden_size must be a positive integer, not '8'"),
        ({"num_hidden_layers": 0}, "num_hidden_layers must be a positive integer, not 0"),
        ({"vocab_size": True}, "vocab_size must be a positive integer, not True"),
        ({"vocab_size": 20.0}, "vocab_size must be a positive integer, not 20.0"),
        ({"num_attention_heads": 3}, "hidden_size 8 is not a multiple of num_attention_heads 3"),
        ({"layer_norm_eps": "tiny"}, "layer_norm_eps must be a number in \\(0, 1\\)"),
        ({"hidden_act": "swish"}, "hidden_act 'swish' is not implemented"),
        ({"position_embedding_type": "relative_key"}, "'relative_key' is not implemented"),
        ({"type_vocab_size": 0}, "type_vocab_size must be a positive integer"),
        ({"is_decoder": True}, "is_decoder is true: only the bidirectional encoder"),
        ({"model_type": "gpt2"}, "model_type 'gpt2' is not supported; supported: bert, mpnet"),
        ({"architectures": ["RobertaModel"]}, "architecture 'RobertaModel' is not a bert encoder"),
        ({"architectures": "BertModel"}, "architectures must be a list of names"),
    ],
)
def test_a_wrong_field_is_refused_in_one_line(tmp_path, cfg, why):
    (tmp_path / "config.json").write_text(json.dumps(BERT | cfg))
    with pytest.raises(PretrainedError, match=why) as err:
        encoder_config(tmp_path / "config.json")
    one_line(err.value)


def test_mpnet_buckets_other_than_the_references_are_refused(tmp_path):
    (tmp_path / "config.json").write_text(
        json.dumps(MPNET | {"relative_attention_num_buckets": 64})
    )
    with pytest.raises(PretrainedError, match="64 is not implemented \\(only 32\\)"):
        encoder_config(tmp_path / "config.json")


@pytest.mark.parametrize("text, why", [("{", "is not valid JSON"), ("[1]", "is not a JSON object")])
def test_a_config_that_is_not_a_json_object_is_refused(tmp_path, text, why):
    (tmp_path / "config.json").write_text(text)
    with pytest.raises(PretrainedError, match=why):
        encoder_config(tmp_path / "config.json")


def test_every_missing_file_is_named(tmp_path):
    with pytest.raises(PretrainedError, match="does not exist"):
        find_model(tmp_path / "nowhere")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(
        PretrainedError, match="holds no model.safetensors and no .gguf file; give a folder with"
    ):
        find_model(empty)
    (empty / "pytorch_model.bin").write_bytes(b"")
    with pytest.raises(PretrainedError, match="pickled checkpoints are not read"):
        find_model(empty)
    sharded = tmp_path / "sharded"
    sharded.mkdir()
    (sharded / "model-00001-of-00002.safetensors").write_bytes(b"")
    with pytest.raises(PretrainedError, match="sharded checkpoints are not supported"):
        find_model(sharded)
    folder = write_model(tmp_path / "m", BERT)
    (folder / "tokenizer.json").unlink()
    (folder / "config.json").unlink()
    with pytest.raises(
        PretrainedError, match="has model.safetensors but no config.json and no tokenizer.json"
    ):
        find_model(folder)
    with pytest.raises(PretrainedError, match="is a file but not a .gguf file"):
        find_model(folder / "model.safetensors")
    for name in ("a.gguf", "b.gguf"):
        (empty / name).write_bytes(b"")
    with pytest.raises(PretrainedError, match="holds 2 .gguf files \\(a.gguf, b.gguf\\)"):
        find_model(empty)
    assert find_model(empty / "b.gguf").weights == empty / "b.gguf"


def test_weights_that_do_not_fit_the_config_are_named(tmp_path):
    tensors = encoder_tensors(BERT)
    three = write_model(tmp_path / "three", BERT | {"num_hidden_layers": 3}, tensors)
    with pytest.raises(
        PretrainedError, match="has no tensor 'encoder.layer.2.attention.self.query.weight'"
    ):
        load_model(three)
    wide = write_model(tmp_path / "wide", BERT | {"intermediate_size": 16}, tensors)
    with pytest.raises(
        PretrainedError,
        match=r"'encoder.layer.0.intermediate.dense.weight' has shape \[12, 8\] but config.json \(bert\) gives \[16, 8\]",
    ):
        load_model(wide)
    # an MPNet config over BERT weights: the relative position table is missing
    with pytest.raises(
        PretrainedError, match="has no tensor 'encoder.relative_attention_bias.weight'"
    ):
        load_model(
            write_model(tmp_path / "other", MPNET | {"max_position_embeddings": 16}, tensors)
        )
    with pytest.raises(PretrainedError, match="has no embeddings.word_embeddings.weight"):
        load_model(write_model(tmp_path / "none", BERT, {"x": torch.zeros(1)}))


def test_a_checkpoint_under_a_task_models_prefix_loads(tmp_path):
    bare = load_model(write_model(tmp_path / "bare", BERT))
    prefixed = {f"bert.{k}": v for k, v in encoder_tensors(BERT).items()}
    prefixed["cls.predictions.bias"] = torch.zeros(20)  # the task head's own tensors are ignored
    cfg = copy.deepcopy(BERT) | {"architectures": ["BertForMaskedLM"]}
    model = load_model(write_model(tmp_path / "mlm", cfg, prefixed))
    ids = torch.tensor([[1, 2, 3]])
    assert torch.equal(model.forward(ids).hidden, bare.forward(ids).hidden)


def test_a_truncated_weight_file_is_one_error_line(tmp_path):
    folder = write_model(tmp_path / "m", BERT)
    raw = (folder / "model.safetensors").read_bytes()
    (folder / "model.safetensors").write_bytes(raw[: len(raw) // 2])
    with pytest.raises(PretrainedError) as err:
        load_model(folder)
    line = error_line(err.value)
    assert (
        line.startswith("entropic-bound: error: ") and "model.safetensors is not a readable" in line
    )
    assert "\n" not in line


def test_a_missing_optional_package_is_one_line(monkeypatch):
    import sys

    from entropic_bound.pretrained.errors import need

    monkeypatch.setitem(sys.modules, "tokenizers", None)  # as if not installed
    with pytest.raises(PretrainedError) as err:
        need("tokenizers", "reading tokenizer.json")
    assert one_line(err.value) == (
        "reading tokenizer.json needs the Python package 'tokenizers', which is not installed; "
        "pip install 'entropic-bound[pretrained]'"
    )
