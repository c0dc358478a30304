"""Text to fixed-length windows of token ids, by the model's own tokenizer (``tokenizers``).

A text is tokenised once, without special tokens, and cut into consecutive chunks; each window
is a chunk between the special tokens the tokenizer's own post-processor puts around one
sequence (an encoder's [CLS] … [SEP]; none for a decoder that adds none), so every window has
exactly ``length`` tokens and no padding. The tail too short for a window is dropped.
"""

from __future__ import annotations

import torch

from entropic_bound.pretrained.errors import PretrainedError, need


def load_tokenizer(path):
    """The ``tokenizers.Tokenizer`` of a tokenizer.json, without its truncation or padding
    (a window's length is set here, not by what the file was saved with)."""
    tokenizers = need("tokenizers", "reading tokenizer.json")
    try:
        tok = tokenizers.Tokenizer.from_file(str(path))
    except Exception as exc:  # noqa: BLE001 - the Rust library raises a bare Exception
        raise PretrainedError(
            f"{path} is not a readable tokenizer ({' '.join(str(exc).split())[:200]})",
            "download or unpack the model again",
        ) from None
    tok.no_truncation()
    tok.no_padding()
    return tok


def special_frame(tok) -> tuple[list[int], list[int]]:
    """The ids the tokenizer's post-processor puts before and after one sequence."""
    body = tok.encode("a", add_special_tokens=False).ids
    full = tok.encode("a", add_special_tokens=True).ids
    for i in range(len(full) - len(body) + 1):
        if full[i : i + len(body)] == body:
            return full[:i], full[i + len(body) :]
    raise PretrainedError(
        "the tokenizer's special tokens do not frame a sequence", "use the model's tokenizer.json"
    )


def token_windows(tok, text: str, length: int, limit: int | None = None) -> torch.Tensor:
    """Windows [N, length] (int64) of ``text`` (at most ``limit`` of them)."""
    before, after = special_frame(tok)
    chunk = length - len(before) - len(after)
    if chunk < 1:
        raise PretrainedError(
            f"windows of {length} tokens leave no room beside the "
            f"{len(before) + len(after)} special tokens",
            "choose a longer window",
        )
    ids = tok.encode(text, add_special_tokens=False).ids
    count = len(ids) // chunk if limit is None else min(limit, len(ids) // chunk)
    if count < 1:
        raise PretrainedError(
            f"the text gives {len(ids)} tokens, fewer than one window's {chunk}",
            "give a longer text or a shorter window",
        )
    body = torch.tensor(ids[: count * chunk], dtype=torch.int64).view(count, chunk)
    parts = [torch.tensor(before, dtype=torch.int64).expand(count, -1), body]
    parts.append(torch.tensor(after, dtype=torch.int64).expand(count, -1))
    return torch.cat(parts, dim=1)


def spread(total: int, count: int | None) -> list[int]:
    """Which of ``total`` consecutive windows a capture takes: every one (``count`` None), else
    ``count`` evenly spaced over the text, window ⌊i · total / count⌋ for i = 0 … count − 1
    (the first always; a rule, no seed: the same text gives the same windows)."""
    if count is None:
        return list(range(total))
    if count < 1:
        raise PretrainedError(f"--windows {count}: need at least one window")
    if count > total:
        raise PretrainedError(
            f"the text gives {total} windows, fewer than the {count} asked for",
            "give more text, a shorter window or fewer windows",
        )
    return [i * total // count for i in range(count)]
