"""Read a ``.safetensors`` file with torch alone, every byte of its layout checked first.

The format: 8 bytes (little-endian u64) giving the header's length N, N bytes of JSON mapping
each tensor's name to ``{"dtype", "shape", "data_offsets": [begin, end]}`` (offsets into the
buffer that follows; an optional ``"__metadata__"`` of strings), then the buffer. The file is
read here rather than through the ``safetensors`` package so that the checks (and the tests of a
damaged file) need nothing beyond the library's own dependencies, and so that each damage is
named in one line. A tensor is read only when asked for (a model takes what it needs).
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import torch

from entropic_bound.pretrained.errors import PretrainedError

#: the format's dtype names -> torch dtypes (the buffer is little-endian)
DTYPES = {
    "F64": torch.float64,
    "F32": torch.float32,
    "F16": torch.float16,
    "BF16": torch.bfloat16,
    "I64": torch.int64,
    "I32": torch.int32,
    "I16": torch.int16,
    "I8": torch.int8,
    "U8": torch.uint8,
    "BOOL": torch.bool,
}
FLOATS = ("F64", "F32", "F16", "BF16")
#: a header larger than this is damage, not a model (the format's own reader refuses 100 MB)
MAX_HEADER = 100_000_000


@dataclass(frozen=True)
class Entry:
    """One tensor of the file: its dtype name, shape and byte range within the buffer."""

    dtype: str
    shape: tuple[int, ...]
    begin: int
    end: int


def _damaged(path: Path, why: str) -> PretrainedError:
    return PretrainedError(
        f"{path} is not a readable .safetensors file ({why})",
        "download or unpack it again (a partial copy is the usual cause)",
    )


def _entry(path: Path, name: str, raw) -> Entry:
    if not isinstance(raw, dict) or not {"dtype", "shape", "data_offsets"} <= set(raw):
        raise _damaged(path, f"tensor {name!r} lacks dtype, shape or data_offsets")
    dtype, shape, offsets = raw["dtype"], raw["shape"], raw["data_offsets"]
    if dtype not in DTYPES:
        raise _damaged(path, f"tensor {name!r} has unknown dtype {dtype!r}")
    ok_shape = isinstance(shape, list) and all(type(s) is int and s >= 0 for s in shape)
    ok_offsets = (
        isinstance(offsets, list)
        and len(offsets) == 2
        and all(type(o) is int for o in offsets)
        and 0 <= offsets[0] <= offsets[1]
    )
    if not (ok_shape and ok_offsets):
        raise _damaged(path, f"tensor {name!r} has a malformed shape or data_offsets")
    size = math.prod(shape) * DTYPES[dtype].itemsize
    if offsets[1] - offsets[0] != size:
        raise _damaged(
            path, f"tensor {name!r}: {offsets[1] - offsets[0]} bytes for shape {shape} {dtype}"
        )
    return Entry(dtype, tuple(shape), offsets[0], offsets[1])


def read_header(path: Path) -> tuple[dict[str, Entry], int, dict]:
    """``(entries, start of the buffer, metadata)``, after checking that the tensors tile the
    buffer exactly, which a truncated or padded file cannot."""
    size = path.stat().st_size
    with open(path, "rb") as f:
        head = f.read(8)
        if len(head) < 8:
            raise _damaged(path, f"{size} bytes, shorter than the 8-byte header length")
        n = int.from_bytes(head, "little")
        if n > min(size - 8, MAX_HEADER):
            raise _damaged(path, f"the header claims {n} bytes, the file holds {size - 8}")
        text = f.read(n)
    try:
        header = json.loads(text)
    except (UnicodeDecodeError, ValueError):
        raise _damaged(path, "the header is not JSON") from None
    if not isinstance(header, dict):
        raise _damaged(path, "the header is not a JSON object")
    meta = header.pop("__metadata__", None) or {}
    entries = {name: _entry(path, name, raw) for name, raw in header.items()}
    start, end = 8 + n, 0
    for e in sorted(entries.values(), key=lambda e: (e.begin, e.end)):
        if e.begin != end:
            raise _damaged(path, f"the tensors leave a gap or overlap at buffer byte {end}")
        end = e.end
    if start + end != size:
        raise _damaged(path, f"the header describes {start + end} bytes, the file holds {size}")
    return entries, start, meta


class TensorFile:
    """The tensors of one ``.safetensors`` file, each read on request."""

    def __init__(self, path):
        if sys.byteorder != "little":  # the buffer is little-endian; no byte swapping here
            raise PretrainedError("reading .safetensors needs a little-endian machine")
        self.path = Path(path)
        self.entries, self._start, self.metadata = read_header(self.path)

    def __contains__(self, name: str) -> bool:
        return name in self.entries

    def names(self) -> list[str]:
        return sorted(self.entries)

    def read(self, name: str) -> torch.Tensor:
        """Tensor ``name`` as stored (its own dtype), in memory of its own."""
        e = self.entries[name]
        with open(self.path, "rb") as f:
            f.seek(self._start + e.begin)
            data = bytearray(f.read(e.end - e.begin))
        if len(data) != e.end - e.begin:  # the file shrank since the header was read
            raise _damaged(self.path, f"tensor {name!r} ends past the end of the file")
        if not data:
            return torch.empty(e.shape, dtype=DTYPES[e.dtype])
        return torch.frombuffer(data, dtype=DTYPES[e.dtype]).reshape(e.shape)

    def weight(self, name: str, shape: tuple[int, ...], why: str) -> torch.Tensor:
        """Floating-point tensor ``name`` of shape ``shape`` as float32; ``why``: where the shape
        comes from, for the message when it differs."""
        if name not in self.entries:
            raise PretrainedError(
                f"{self.path.name} has no tensor {name!r} ({why})",
                "check that the weights and config.json belong to the same model",
            )
        e = self.entries[name]
        if e.dtype not in FLOATS:
            raise _damaged(self.path, f"tensor {name!r} is {e.dtype}, not floating point")
        if e.shape != tuple(shape):
            raise PretrainedError(
                f"{self.path.name}: tensor {name!r} has shape {list(e.shape)} but {why} "
                f"gives {list(shape)}",
                "check that the weights and config.json belong to the same model",
            )
        return self.read(name).to(torch.float32)
