"""Windows of token ids: consecutive chunks of the text between the special tokens the
tokenizer's own post-processor adds, whatever truncation or padding its file was saved with."""

import pytest
import torch
from tiny import BERT, write_model

from entropic_bound.pretrained import PretrainedError, load_model, windows
from entropic_bound.pretrained.tokens import load_tokenizer, special_frame, token_windows

tokenizers = pytest.importorskip("tokenizers")

WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "a", "b", "c", "d", "e", "f", "g"]


def word_tokenizer(path, specials: bool = True):
    """One id per word (a → 4 … g → 10); [CLS] … [SEP] around a sequence when ``specials``;
    saved truncating to 4 tokens and padding, which windows must ignore."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors

    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    if specials:
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)]
        )
    tok.enable_truncation(4)
    tok.enable_padding(length=4, pad_id=0, pad_token="[PAD]")
    tok.save(str(path))
    return path


def test_windows_frame_consecutive_chunks_and_drop_the_tail(tmp_path):
    tok = load_tokenizer(word_tokenizer(tmp_path / "tokenizer.json"))
    assert special_frame(tok) == ([2], [3])
    ids = token_windows(tok, "a b c d e f g", 5)
    assert ids.tolist() == [[2, 4, 5, 6, 3], [2, 7, 8, 9, 3]]  # g: too few for a third window
    assert ids.dtype == torch.int64
    assert token_windows(tok, "a b c d e f g", 5, limit=1).tolist() == [[2, 4, 5, 6, 3]]
    assert token_windows(tok, "a b c d e f g", 9).tolist() == [[2, 4, 5, 6, 7, 8, 9, 10, 3]]


def test_a_tokenizer_without_specials_cuts_plain_chunks(tmp_path):
    tok = load_tokenizer(word_tokenizer(tmp_path / "tokenizer.json", specials=False))
    assert special_frame(tok) == ([], [])
    assert token_windows(tok, "a b c d e f g", 3).tolist() == [[4, 5, 6], [7, 8, 9]]


def test_too_short_a_text_or_window_is_one_line(tmp_path):
    tok = load_tokenizer(word_tokenizer(tmp_path / "tokenizer.json"))
    with pytest.raises(PretrainedError, match="the text gives 2 tokens, fewer than one window's 3"):
        token_windows(tok, "a b", 5)
    with pytest.raises(
        PretrainedError, match="windows of 2 tokens leave no room beside the 2 special tokens"
    ):
        token_windows(tok, "a b c", 2)


def test_a_damaged_tokenizer_file_is_one_line(tmp_path):
    (tmp_path / "tokenizer.json").write_text('{"model": 3}')
    with pytest.raises(PretrainedError, match="is not a readable tokenizer") as err:
        load_tokenizer(tmp_path / "tokenizer.json")
    assert "\n" not in str(err.value)


def test_a_models_windows_use_its_own_tokenizer_and_run(tmp_path):
    folder = write_model(tmp_path / "m", BERT | {"vocab_size": len(WORDS)})
    word_tokenizer(folder / "tokenizer.json")
    model = load_model(folder)
    text = tmp_path / "text.txt"
    text.write_text("a b c d e f g a b c")
    ids = windows(model, text, 5)
    assert ids.tolist() == [[2, 4, 5, 6, 3], [2, 7, 8, 9, 3], [2, 10, 4, 5, 3]]
    assert model.forward(ids).hidden.shape == (3, 5, 8)
