"""Where a pretrained model's files are: a folder of ``config.json``, ``model.safetensors`` and
``tokenizer.json`` (an encoder), or one ``.gguf`` file (weights, settings and tokenizer in one).

Pickled checkpoints (``pytorch_model.bin``) are never read: loading one runs code it contains.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from entropic_bound.pretrained.errors import PretrainedError

SAFETENSORS_FILES = ("config.json", "model.safetensors", "tokenizer.json")


@dataclass(frozen=True)
class ModelFiles:
    """The files of one model: ``format`` is "safetensors" (config, weights and tokenizer each
    a file) or "gguf" (``weights`` holds all three)."""

    root: Path
    format: str
    weights: Path
    config: Path | None = None
    tokenizer: Path | None = None


def _gguf_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.suffix == ".gguf" and p.is_file())


def _nothing_here(folder: Path) -> PretrainedError:
    names = {p.name for p in folder.iterdir()}
    if "pytorch_model.bin" in names:
        todo = (
            "pickled checkpoints are not read (loading one runs its code); save it as safetensors"
        )
    elif any(n.startswith("model-") and n.endswith(".safetensors") for n in names):
        todo = "sharded checkpoints are not supported; merge the shards into model.safetensors"
    else:
        todo = f"give a folder with {', '.join(SAFETENSORS_FILES)}, or a .gguf file"
    return PretrainedError(f"{folder} holds no model.safetensors and no .gguf file", todo)


def find_model(path) -> ModelFiles:
    """The :class:`ModelFiles` at ``path`` (a model folder or a .gguf file), every file present."""
    path = Path(path)
    if not path.exists():
        raise PretrainedError(f"{path} does not exist", "give the folder of an unpacked model")
    if path.is_file():
        if path.suffix != ".gguf":
            raise PretrainedError(
                f"{path} is a file but not a .gguf file", "give the folder that holds it instead"
            )
        return ModelFiles(path.parent, "gguf", path)
    if (path / "model.safetensors").exists():
        missing = [n for n in SAFETENSORS_FILES if not (path / n).is_file()]
        if missing:
            raise PretrainedError(
                f"{path} has model.safetensors but no {' and no '.join(missing)}",
                "unpack the whole model, not the weights alone",
            )
        return ModelFiles(
            path,
            "safetensors",
            path / "model.safetensors",
            path / "config.json",
            path / "tokenizer.json",
        )
    ggufs = _gguf_files(path)
    if len(ggufs) > 1:
        raise PretrainedError(
            f"{path} holds {len(ggufs)} .gguf files ({', '.join(p.name for p in ggufs)})",
            "give the path of the one to read",
        )
    if ggufs:
        return ModelFiles(path, "gguf", ggufs[0])
    raise _nothing_here(path)
