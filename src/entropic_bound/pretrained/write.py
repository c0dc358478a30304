"""A capture written to a folder, for the head measurements and ``entropic-bound predict``.

Per captured layer l, ``layer_<l>.npz`` (uncompressed, so that it is read in place) holds

* ``X`` [K, n, d_model] and ``Y`` [K, H, n, d_head], float32 (:mod:`.capture`): the layout
  ``entropic-bound predict`` reads, one row per head;
* ``w_q``, ``w_k``, ``w_v`` [H, d_head, d_model]: each head's query rows and its key and value
  rows (a decoder's key/value head's, shared within its group), and ``b_q``, ``b_k``, ``b_v``
  [H, d_head] where the family has biases; ``scale`` (0-d float64): the logits' factor;
* ``mask`` [n, n] (uint8, the lower triangle) for a causal model, which predict reads as
  ``--causal``; ``position_bias`` [H, n, n] for MPNet (added to every layer's logits);
  ``rope_cos``, ``rope_sin`` [n, d_head] for a Llama-style decoder (the rotation by position).

``windows.npz`` holds the token ids ``ids`` [K, n] (int64) and ``chunk`` [K], which chunk of
the text each window is; ``manifest.json`` what was read and written (every file's SHA-256).

Windows are run ``batch`` at a time and each batch's X and Y appended to files of their final
shape, so memory holds the model and one batch, not the capture. The folder is written under a
temporary name beside ``out`` and renamed onto it when complete: an error or an interruption
leaves nothing. Zip members carry a fixed date and the manifest no time, so the same inputs on
the same machine (batch and threads included) give the same bytes.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
import zipfile
from pathlib import Path

import numpy as np
import torch

from entropic_bound.pretrained.errors import PretrainedError

#: the manifest's ``format``: what the folder's layout is
FORMAT = "entropic-bound heads capture 2"
#: every zip member's date (the zip format's earliest)
ZIP_TIME = (1980, 1, 1, 0, 0, 0)


def model_facts(model) -> dict:
    """A loaded model's family and shape, as the manifest records them."""
    c = model.cfg
    return {
        "family": getattr(c, "model_type", "llama"),
        "layers": c.layers,
        "heads": c.heads,
        "kv_heads": getattr(c, "kv_heads", c.heads),
        "d_model": c.d_model,
        "d_head": c.d_head,
        "max_len": model.max_len,
        "causal": bool(getattr(model, "causal", False)),
        "scale": model.scale,
    }


def _as_numpy(t: torch.Tensor, dtype=np.float32) -> np.ndarray:
    return np.ascontiguousarray(t.detach().cpu().numpy(), dtype=dtype)


def shared_members(model, n: int) -> list[tuple[str, np.ndarray]]:
    """What every layer's file holds besides its own maps: the causal mask, MPNet's position
    bias, a decoder's rotation."""
    out = []
    if getattr(model, "causal", False):
        out.append(("mask", np.tril(np.ones((n, n), dtype=np.uint8))))
    bias = model.position_bias(n) if hasattr(model, "position_bias") else None
    if bias is not None:
        out.append(("position_bias", _as_numpy(bias)))
    if hasattr(model, "rope"):
        cos, sin = model.rope(n)
        out += [("rope_cos", _as_numpy(cos)), ("rope_sin", _as_numpy(sin))]
    return out


def head_members(model, layer: int) -> list[tuple[str, np.ndarray]]:
    """Layer ``layer``'s per-head query, key and value maps (and biases), and the logits'
    scale."""
    hw = [model.head_weights(layer, h) for h in range(model.cfg.heads)]
    out = [(f"w_{m}", _as_numpy(torch.stack([getattr(w, f"w_{m}") for w in hw]))) for m in "qkv"]
    if hw[0].b_q is not None:
        out += [
            (f"b_{m}", _as_numpy(torch.stack([getattr(w, f"b_{m}") for w in hw]))) for m in "qkv"
        ]
    return out + [("scale", np.array(hw[0].scale, dtype=np.float64))]


class NpyStream:
    """A .npy file of a known shape, written a block of rows (along the first axis) at a time."""

    def __init__(self, path: Path, shape: tuple[int, ...], dtype=np.float32):
        self.path, self.shape, self.dtype = path, tuple(shape), np.dtype(dtype)
        self.rows = 0
        self.file = open(path, "wb")
        header = {"descr": np.lib.format.dtype_to_descr(self.dtype), "fortran_order": False}
        np.lib.format.write_array_header_1_0(self.file, header | {"shape": self.shape})

    def append(self, block: np.ndarray) -> None:
        if tuple(block.shape[1:]) != self.shape[1:] or self.rows + len(block) > self.shape[0]:
            raise PretrainedError(f"a block of {list(block.shape)} does not fit {list(self.shape)}")
        self.file.write(np.ascontiguousarray(block, dtype=self.dtype).tobytes())
        self.rows += len(block)

    def close(self) -> None:
        self.file.close()
        if self.rows != self.shape[0]:
            raise PretrainedError(f"{self.path.name}: {self.rows} rows of {self.shape[0]} written")


def write_npz(path: Path, members: list[tuple[str, np.ndarray | NpyStream]]) -> None:
    """An uncompressed .npz of ``members`` in their order (a stream's file copied as it is)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
        for name, value in members:
            info = zipfile.ZipInfo(f"{name}.npy", date_time=ZIP_TIME)
            info.compress_type = zipfile.ZIP_STORED
            info.external_attr = 0o644 << 16
            with zf.open(info, "w", force_zip64=True) as dst:
                if isinstance(value, NpyStream):
                    with open(value.path, "rb") as src:
                        shutil.copyfileobj(src, dst, 1 << 22)
                else:
                    np.lib.format.write_array(dst, value, allow_pickle=False)


def _describe(path: Path, members) -> dict:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 24), b""):
            h.update(block)
    arrays = {
        name: {
            "shape": list(v.shape),
            "dtype": str(v.dtype),
        }
        for name, v in members
    }
    return {"bytes": path.stat().st_size, "sha256": h.hexdigest(), "members": arrays}


def check_out(out) -> Path:
    """``out`` as a folder to write: its parent must exist; an existing ``out`` must be empty
    or hold an earlier capture (replaced once the new one is complete)."""
    out = Path(out)
    if not out.parent.is_dir():
        raise PretrainedError(f"--out {out}: folder {out.parent} does not exist", "create it first")
    if out.exists():
        if not out.is_dir():
            raise PretrainedError(f"--out {out} is a file", "give a folder")
        names = {p.name for p in out.iterdir()}
        if names and "manifest.json" not in names:
            raise PretrainedError(
                f"--out {out} holds files but no manifest.json of a capture",
                "give a new or empty folder (an earlier capture is replaced)",
            )
    if not os.access(out.parent, os.W_OK | os.X_OK):
        raise PretrainedError(f"--out {out}: folder {out.parent} is not writable", "choose another")
    return out


@contextlib.contextmanager
def folder_in_place(out: Path):
    """A temporary folder beside ``out``, renamed onto it (an earlier one replaced) when the
    block ends without an error, removed when it does not."""
    tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}."))
    try:
        yield tmp
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o777 & ~umask)
        if out.exists():
            old = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.old."))
            os.replace(out, old / "capture")
            os.replace(tmp, out)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def write_capture(model, ids, chunks, out, layers, batch: int, manifest: dict) -> dict:
    """Run ``model`` on windows ``ids`` [K, n] (``chunks``: which chunk of the text each is),
    ``batch`` windows at a time, keeping ``layers``, and write the folder ``out`` (module
    docstring); ``manifest`` (what was read) is completed and written. Returns it."""
    out = check_out(out)
    ids = torch.as_tensor(ids, dtype=torch.int64)
    K, n = ids.shape
    facts = model_facts(model)
    H, dh, d = facts["heads"], facts["d_head"], facts["d_model"]
    shared = shared_members(model, n)
    files = {}
    with folder_in_place(out) as tmp:
        xs = {i: NpyStream(tmp / f".X_{i}.npy", (K, n, d)) for i in layers}
        ys = {i: NpyStream(tmp / f".Y_{i}.npy", (K, H, n, dh)) for i in layers}
        try:
            for s in range(0, K, batch):
                part = model.forward(ids[s : s + batch], capture=layers, batch=batch, hidden=False)
                for i in layers:
                    xs[i].append(_as_numpy(part.layers[i].x))
                    ys[i].append(_as_numpy(part.layers[i].y))
        finally:
            for stream in (*xs.values(), *ys.values()):
                stream.file.close()
        for i in layers:
            xs[i].close()
            ys[i].close()
            members = [("X", xs[i]), ("Y", ys[i]), *head_members(model, i), *shared]
            write_npz(tmp / f"layer_{i}.npz", members)
            files[f"layer_{i}.npz"] = _describe(tmp / f"layer_{i}.npz", members)
            xs[i].path.unlink()
            ys[i].path.unlink()
        window_members = [("ids", ids.numpy()), ("chunk", np.asarray(chunks, dtype=np.int64))]
        write_npz(tmp / "windows.npz", window_members)
        files["windows.npz"] = _describe(tmp / "windows.npz", window_members)
        manifest = {
            "format": FORMAT,
            **manifest,
            "model": {**manifest.get("model", {}), **facts},
            "layers": list(layers),
            "batch": batch,
            "files": files,
        }
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return manifest
