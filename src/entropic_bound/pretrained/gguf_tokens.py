"""The tokenizer a GGUF file carries, rebuilt for ``tokenizers``: byte-level BPE (llama.cpp's
"gpt2" tokenizer model) from the file's vocabulary and merges, its text split as llama.cpp
splits it for the file's pre-tokenizer name, control tokens matched whole."""

from __future__ import annotations

from entropic_bound.pretrained.errors import PretrainedError, need
from entropic_bound.pretrained.gguf_file import meta, open_gguf

#: llama.cpp's pre-tokenizer names implemented: GPT-2's split, SmolLM's (digits one by one first)
PRE_TOKENIZERS = ("default", "gpt-2", "smollm")
#: llama.cpp's token type of a control token (<|im_start|> …), matched whole and never split
CONTROL = 3


def _list(reader, path, key: str) -> list:
    field = reader.fields.get(key)
    if field is None:
        raise PretrainedError(f"{path}: metadata {key} is missing", "the file has no tokenizer")
    return field.contents()


def gguf_tokenizer(path):
    """A ``tokenizers.Tokenizer`` of the GGUF file at ``path``."""
    tk = need("tokenizers", "tokenizing for a .gguf model")
    reader = open_gguf(path)
    kind = meta(reader, path, "tokenizer.ggml.model", str)
    pre = meta(reader, path, "tokenizer.ggml.pre", str, "default")
    if kind != "gpt2" or pre not in PRE_TOKENIZERS:
        raise PretrainedError(
            f"{path}: tokenizer {kind!r} with pre-tokenizer {pre!r} is not implemented",
            f"implemented: 'gpt2' with {', '.join(PRE_TOKENIZERS)}; or pass token ids",
        )
    tokens = _list(reader, path, "tokenizer.ggml.tokens")
    merges = [tuple(m.split(" ", 1)) for m in _list(reader, path, "tokenizer.ggml.merges")]
    types = _list(reader, path, "tokenizer.ggml.token_type")
    tok = tk.Tokenizer(tk.models.BPE({t: i for i, t in enumerate(tokens)}, merges))
    split = tk.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    if pre == "smollm":
        split = tk.pre_tokenizers.Sequence(
            [tk.pre_tokenizers.Digits(individual_digits=True), split]
        )
    tok.pre_tokenizer = split
    tok.decoder = tk.decoders.ByteLevel()
    tok.add_special_tokens(
        [
            tk.AddedToken(t, special=True, normalized=False)
            for t, k in zip(tokens, types)
            if k == CONTROL
        ]
    )
    if meta(reader, path, "tokenizer.ggml.add_bos_token", bool, False):
        bos = reader.fields["tokenizer.ggml.bos_token_id"].contents()
        tok.post_processor = tk.processors.TemplateProcessing(
            single=f"{tokens[bos]} $A", special_tokens=[(tokens[bos], bos)]
        )
    return tok
