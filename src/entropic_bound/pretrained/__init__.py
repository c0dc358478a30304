"""Pretrained transformers read from their published files, forward passes only: for each
captured layer, the heads' input X and every head's output Y before the output projection, and
each head's query and key maps (:mod:`.capture`), for the head measurements to read.

Families: BERT (:mod:`.bert`) and MPNet (:mod:`.mpnet`) from a folder of config.json,
model.safetensors and tokenizer.json; Llama-style decoders (:mod:`.llama`) from one GGUF file
(:mod:`.gguf_file`, :mod:`.gguf_tokens`). Torch is the only dependency of the forward passes;
tokenizers need ``tokenizers`` and GGUF files ``gguf`` (the ``pretrained`` extra), each imported
only when used. Every problem with a model's files is one :class:`.errors.PretrainedError`.
A capture on windows of text is written to a folder by :mod:`.write` (``entropic-bound heads``);
the text the heads read, and how text files are joined, is :mod:`.corpus`. Every head of a
capture is measured by :mod:`.measure` (its functional knee under both truncations,
:mod:`.knee`; its estimators and ``predict``'s answer), registration H3 is evaluated by
:mod:`.h3`, and :mod:`.study` and :mod:`.figure` make what a reader sees (docs/method.md §9e).
"""

from entropic_bound.core.lazy import lazy_exports

#: public name -> the module that defines it
_EXPORTS = {
    "PretrainedError": "errors",
    "find_model": "layout",
    "ModelFiles": "layout",
    "load_model": "load",
    "windows": "load",
    "Forward": "capture",
    "LayerCapture": "capture",
    "HeadWeights": "capture",
    "TensorFile": "tensorfile",
    "encoder_config": "config",
    "EncoderConfig": "config",
    "LlamaConfig": "llama",
    "LlamaDecoder": "llama",
    "load_gguf": "gguf_file",
    "write_capture": "write",
    "corpus_files": "corpus",
    "read_texts": "corpus",
}

__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
