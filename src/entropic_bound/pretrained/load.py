"""A pretrained model from its folder or file, by family, with the tokenizer that belongs to it.

``load_model(folder)`` reads and checks every weight; ``windows(model, text, 128)`` gives token
ids [N, 128]; ``model.forward(ids, capture=[0, 3])`` gives ``out.layers[3].x`` and ``.y``, and
``model.head_weights(3, h)`` head h's query and key maps.
"""

from __future__ import annotations

from entropic_bound.pretrained.layout import find_model


def load_model(path):
    """The model at ``path`` (:func:`.layout.find_model`), every weight read and checked; its
    files are ``model.files``."""
    files = find_model(path)
    if files.format == "gguf":
        from entropic_bound.pretrained.gguf_file import load_gguf

        model = load_gguf(files.weights)
    else:
        from entropic_bound.pretrained.bert import Encoder
        from entropic_bound.pretrained.config import encoder_config
        from entropic_bound.pretrained.mpnet import MPNetEncoder
        from entropic_bound.pretrained.tensorfile import TensorFile

        cfg = encoder_config(files.config)
        family = {"bert": Encoder, "mpnet": MPNetEncoder}[cfg.model_type]
        model = family(cfg, TensorFile(files.weights))
    model.files = files
    return model


def tokenizer_of(model):
    """The ``tokenizers.Tokenizer`` of ``model``: its tokenizer.json, or the one its GGUF file
    carries."""
    if model.files.format == "gguf":
        from entropic_bound.pretrained.gguf_tokens import gguf_tokenizer

        return gguf_tokenizer(model.files.weights)
    from entropic_bound.pretrained.tokens import load_tokenizer

    return load_tokenizer(model.files.tokenizer)


def windows(model, text, length: int, limit: int | None = None):
    """Windows [N, length] of ``text`` (a string, or a :class:`~pathlib.Path` of UTF-8 text)
    by the tokenizer of ``model`` (:func:`.tokens.token_windows`)."""
    from pathlib import Path

    from entropic_bound.pretrained.tokens import token_windows

    if isinstance(text, Path):
        text = text.read_text(encoding="utf-8")
    return token_windows(tokenizer_of(model), text, length, limit)
