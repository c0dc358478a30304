"""Reading ``.npy`` files and ``.npz`` members in chunks of rows, whatever the file holds.

Arrays are never loaded whole: they are read ``rows`` at a time along the first axis, in place for
``.npy`` files and stored (uncompressed) ``.npz`` members, streamed for compressed ones, so memory
does not grow with the number of sequences. The file is hostile until proven otherwise:

* only regular files are opened (``O_NONBLOCK`` and an ``fstat`` check, so a FIFO never hangs);
* every header is parsed by numpy's own reader (its 10,000-byte header cap included), and its
  shape checked: integers >= 0, and ``prod(shape) · itemsize`` no larger than the bytes that
  follow the header in the file or in the member (a member cannot be read past its end into the
  next one);
* a stored member's bytes are checked against the zip's CRC-32 as they are read (a Fortran-ordered
  one's before, as its rows are strided), and a compressed
  member's by zipfile itself, so a damaged file is refused, never answered;
* encrypted, duplicated and malformed members are marked with the reason (``ArrayRef.problem``),
  reported only when that array is used;
* a compressed member's compressed bytes lie within the archive, and it may not declare more
  than ``INFLATE_RATIO`` times them (beyond ``INFLATE_FREE`` bytes; deflate: 1032, its own
  ceiling): a zip bomb is refused from its headers, never inflated;
* small optional members (a task file's ``meta``) are read whole only below ``SMALL_BYTES``.

Bad input raises :class:`InputError`: what is wrong; what to do, in one line.
"""

from __future__ import annotations

import math
import os
import stat
import zipfile
import zlib
from dataclasses import dataclass

import numpy as np

from entropic_bound.predict.sources import (  # noqa: F401  re-exported: the CLI reads them here
    CHUNK_ITEMS,
    ArraySource,
    InputError,
    rows_per_chunk,
)

#: optional members (``meta``) and string arrays are read whole only up to this many bytes
SMALL_BYTES = 1 << 16
SAVE_HINT = "save arrays with numpy.save or numpy.savez"
#: a compressed member may declare at most this many times its compressed size (beyond
#: INFLATE_FREE bytes): deflate (numpy.savez_compressed) cannot exceed 1032:1, so a larger claim
#: is a lying header; real data reach several hundred (one-hot rows, zero padding), so the bound
#: is deflate's own. bzip2 and lzma (which numpy never writes) have no such ceiling: a bomb of
#: theirs inflates millions of times, and beyond 100:1 they are refused as one
INFLATE_RATIO = {zipfile.ZIP_DEFLATED: 1032}
INFLATE_RATIO_OTHER = 100
INFLATE_FREE = 1 << 28
#: a PyTorch file (torch.save) is refused by name: reading it means unpickling, which runs code
TORCH_FILE = "{} is a PyTorch file ({}), not a .npz or .npy: it is not supported"
TORCH_HINT = (
    "save the tensors as arrays: numpy.savez(FILE, X=X.detach().cpu().numpy(), "
    "Y=Y.detach().cpu().numpy())"
)


class DamagedError(InputError):
    """The file's sizes contradict each other (a truncated member, members that overlap): the
    whole file is suspect, not only the array (``inspect`` refuses it)."""


_KINDS = {
    stat.S_IFIFO: "FIFO (named pipe)",
    stat.S_IFSOCK: "socket",
    stat.S_IFCHR: "character device",
    stat.S_IFBLK: "block device",
}


def open_regular(path: str, label: str | None = None):
    """A binary file object on ``path``, which must be a regular file (never blocks)."""
    label = label or path
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        raise InputError(f"file {label} does not exist", "check the path") from None
    except OSError as exc:
        raise InputError(
            f"cannot reach {label} ({exc.strerror or exc})", "check the path"
        ) from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError(f"{label} is a directory", "give a .npz or .npy file")
    if not stat.S_ISREG(st.st_mode):
        kind = _KINDS.get(stat.S_IFMT(st.st_mode), "special file")
        raise InputError(f"{label} is a {kind}, not a regular file", "save the data to a file")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise InputError(
            f"cannot read {label} ({exc.strerror or exc})", "check the file's permissions"
        ) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped since the stat: refuse, never block
        os.close(fd)
        raise InputError(f"{label} is not a regular file", "save the data to a file")
    return os.fdopen(fd, "rb")


@dataclass
class ArrayRef:
    """One array of a ``.npy`` file or ``.npz`` member, read in chunks of its first axis."""

    path: str
    name: str
    member: str | None = None  # zip member; None for a .npy file
    shape: tuple = ()
    dtype: np.dtype | None = None
    fortran: bool = False
    offset: int | None = None  # where the data start in the file, when they can be read in place
    available: int = 0  # bytes after the header (in the file, or in the member)
    crc: tuple | None = None  # (member start, member size, CRC-32) of a stored member
    problem: str | None = None  # why the array cannot be read (reported only when it is used)
    damaged: bool = False  # the problem is a damaged file (DamagedError), not an odd array
    label: str | None = None  # how to name the array in messages (default: name in path)

    @property
    def numeric(self) -> bool:
        return self.dtype is not None and self.dtype.kind in "biuf" and not self.dtype.fields

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * (self.dtype.itemsize if self.dtype is not None else 0)

    def where(self) -> str:
        if self.label:
            return self.label
        return f"{self.name} in {self.path}" if self.member is not None else self.path

    def check(self) -> None:
        if self.problem:
            raise InputError(self.problem, "re-save the file with numpy.savez")

    def rows(self, k: int):
        """Yield ``(start, block)``, ``k`` rows at a time: block is [≤k, *shape[1:]]."""
        return iter_rows(self, k)


def read_header(fp, where: str, available: int) -> tuple[tuple, bool, np.dtype, int]:
    """Shape, Fortran order, dtype and header length of a .npy header, checked against the
    ``available`` bytes (of the file or the member) before anything is allocated."""
    try:
        start = fp.tell()
        version = np.lib.format.read_magic(fp)
        if version not in ((1, 0), (2, 0), (3, 0)):
            raise ValueError(f"unknown format version {version[0]}.{version[1]}")
        reader = (
            np.lib.format.read_array_header_1_0
            if version == (1, 0)
            else np.lib.format.read_array_header_2_0
        )  # 3.0 differs only in utf-8 names
        shape, fortran, dtype = reader(fp)
        header = fp.tell() - start
    except Exception as exc:  # numpy raises ValueError, EOFError, SyntaxError... on a bad header
        first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
        raise InputError(f"{where} is not a valid .npy array ({first})", SAVE_HINT) from None
    shape, dtype = tuple(shape), np.dtype(dtype)
    if not all(type(s) is int and s >= 0 for s in shape):
        raise InputError(f"{where} declares an impossible shape {shape}", SAVE_HINT)
    need = math.prod(shape) * dtype.itemsize
    if need > available - header:
        raise DamagedError(
            f"{where} is truncated: its header declares shape {shape} of {dtype} "
            f"({need:,} bytes) but only {max(available - header, 0):,} bytes follow it",
            "re-create the file",
        )
    return shape, bool(fortran), dtype, header


def file_kind(path: str, label: str | None = None) -> str:
    """'npz' or 'npy' by the file's first bytes (not its name)."""
    with open_regular(path, label) as fh:
        head = fh.read(6)
    if head.startswith(b"\x93NUMPY"):
        return "npy"
    if head[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        return "npz"
    if head[:1] == b"\x80":  # a pickle: torch.save's legacy format, or pickle.dump
        raise InputError(TORCH_FILE.format(label or path, "a pickle"), TORCH_HINT)
    raise InputError(
        f"{label or path} is not a .npz or .npy file" + (" (it is empty)" if not head else ""),
        "save X and Y with numpy.savez(FILE, X=X, Y=Y), or each with numpy.save",
    )


def _member(zf: zipfile.ZipFile, raw, info: zipfile.ZipInfo, ref: ArrayRef, size: int) -> None:
    """Fill ``ref`` from a zip member's local header and .npy header."""
    if info.flag_bits & 0x1:
        raise InputError(f"{ref.where()} is encrypted", "save it without encryption")
    if info.compress_type != zipfile.ZIP_STORED:
        if info.header_offset + info.compress_size > size:  # the ratio below trusts it
            raise DamagedError(
                f"{ref.where()} claims {info.compress_size:,} compressed bytes that the archive "
                "does not hold (truncated or damaged)",
                "re-create the file",
            )
        ratio = INFLATE_RATIO.get(info.compress_type, INFLATE_RATIO_OTHER)
        if info.file_size > max(INFLATE_FREE, ratio * info.compress_size):
            raise InputError(
                f"{ref.where()} declares {info.file_size:,} bytes compressed into "
                f"{info.compress_size:,}, over {ratio}:1: a zip bomb or a damaged archive "
                "(data this repetitive: save them uncompressed, with numpy.savez)"
            )
        with zf.open(info) as fp:
            ref.shape, ref.fortran, ref.dtype, _ = read_header(fp, ref.where(), info.file_size)
        ref.available = info.file_size
        return
    # stored: read in place after the local header (30 bytes + its own name and extra field)
    raw.seek(info.header_offset)
    local = raw.read(30)
    if len(local) < 30 or local[:4] != b"PK\x03\x04":
        raise InputError(f"{ref.where()} has a damaged zip header", "re-save the file")
    name_len = int.from_bytes(local[26:28], "little")
    start = info.header_offset + 30 + name_len + int.from_bytes(local[28:30], "little")
    encoding = "utf-8" if info.flag_bits & 0x800 else "cp437"
    if raw.read(name_len).decode(encoding, "replace") != info.orig_filename:
        raise InputError(f"{ref.where()}: its zip headers disagree on its name", "re-save the file")
    if info.compress_size != info.file_size or start + info.file_size > size:
        raise DamagedError(
            f"{ref.where()} claims {info.file_size:,} bytes that the archive does not hold "
            "(truncated or damaged)",
            "re-create the file",
        )
    raw.seek(start)
    ref.shape, ref.fortran, ref.dtype, header = read_header(raw, ref.where(), info.file_size)
    ref.offset, ref.available = start + header, info.file_size
    ref.crc = (start, info.file_size, info.CRC)


def _overlapping(raw, infos: list[zipfile.ZipInfo], directory: int) -> dict:
    """Members whose bytes run into the next member's header or the central directory, by name:
    a function of the member's label giving the problem. A member's sizes (and CRC-32) can be
    forged to take in the following member's bytes; its data would then be read from them."""
    bad = {}
    ordered = sorted(infos, key=lambda i: i.header_offset)
    for info, nxt in zip(ordered, [*ordered[1:], None]):
        bound = nxt.header_offset if nxt is not None else directory
        raw.seek(info.header_offset)
        local = raw.read(30)
        if len(local) < 30:
            continue  # _member reports the damaged header
        data = info.header_offset + 30 + int.from_bytes(local[26:28], "little")
        end = data + int.from_bytes(local[28:30], "little") + info.compress_size
        if end > bound:
            what = f"member {nxt.filename}" if nxt is not None else "the zip directory"

            def problem(where, what=what, over=end - bound):
                return (
                    f"{where} claims {over:,} bytes that belong to {what}: the archive is "
                    "damaged or forged"
                )

            bad[info.filename] = problem
    return bad


def open_arrays(path: str, label: str | None = None) -> tuple[str, dict[str, ArrayRef]]:
    """The arrays of a .npy or .npz file by name (``X.npy`` members are named ``X``)."""
    kind = file_kind(path, label)
    with open_regular(path, label) as raw:
        size = os.fstat(raw.fileno()).st_size
        if kind == "npy":
            name = os.path.splitext(os.path.basename(path))[0]
            ref = ArrayRef(path, name, label=label)
            ref.shape, ref.fortran, ref.dtype, header = read_header(raw, ref.where(), size)
            ref.offset, ref.available = header, size
            return kind, {name: ref}
        try:
            zf = zipfile.ZipFile(raw)
            infos = zf.infolist()
        except Exception as exc:  # noqa: BLE001 - zipfile raises many kinds on a damaged archive
            raise InputError(
                f"{label or path} is not a readable .npz archive ({str(exc) or type(exc).__name__})",
                "re-save it with numpy.savez",
            ) from None
        names = [i.filename for i in infos]
        if any(n.endswith("data.pkl") for n in names) and not any(
            n.endswith(".npy") for n in names
        ):  # torch.save's zip format: a pickle and raw storages, never unpickled here
            raise InputError(TORCH_FILE.format(label or path, "a torch.save zip"), TORCH_HINT)
        refs: dict[str, ArrayRef] = {}
        with zf:
            overlapping = _overlapping(raw, infos, zf.start_dir)
            for info in infos:
                if info.is_dir():
                    continue
                name = info.filename.removesuffix(".npy")
                ref = ArrayRef(path, name, info.filename)
                if name in refs:
                    ref.problem = f"{label or path} holds two members named {name}: ambiguous"
                else:
                    try:
                        _member(zf, raw, info, ref, size)
                        if info.filename in overlapping:  # sizes within the file, yet forged
                            raise DamagedError(overlapping[info.filename](ref.where()))
                    except InputError as exc:
                        ref.problem = str(exc.what)
                        ref.damaged = isinstance(exc, DamagedError)
                    except Exception as exc:  # noqa: BLE001 - damaged member: say so when used
                        ref.problem = (
                            f"{ref.where()} cannot be read ({str(exc) or type(exc).__name__})"
                        )
                refs[name] = ref
    return kind, refs


def iter_rows(ref: ArrayRef, rows: int):
    """Yield ``(start, block)`` over the first axis, ``rows`` at a time, never past the data
    the header declared (which :func:`read_header` checked against the member or file)."""
    ref.check()
    B = ref.shape[0] if ref.shape else 1
    per_row = math.prod(ref.shape[1:])
    if B == 0 or per_row == 0:
        return
    row_bytes = per_row * ref.dtype.itemsize
    item_shape = ref.shape[1:]
    if ref.fortran and len(ref.shape) > 1:  # column-major on disk: a row is strided, so map it
        if ref.offset is None:
            raise InputError(
                f"{ref.where()} is a compressed, Fortran-ordered array, which cannot be read "
                "row by row",
                "save it in C order (numpy.ascontiguousarray) or uncompressed (numpy.savez)",
            )
        with open_regular(ref.path, ref.label) as fh:
            if ref.crc is not None:  # rows are strided on disk: check the member's bytes first
                _check_crc(fh, ref)
            mm = np.memmap(fh, ref.dtype, "r", ref.offset, ref.shape, order="F")
            for start in range(0, B, rows):
                yield start, np.array(mm[start : start + rows])
        return
    if ref.offset is not None:
        with open_regular(ref.path, ref.label) as fh:
            crc = 0
            if ref.crc is not None:
                fh.seek(ref.crc[0])
                crc = zlib.crc32(fh.read(ref.offset - ref.crc[0]))
            else:
                fh.seek(ref.offset)
            for start in range(0, B, rows):
                k = min(rows, B - start)
                buf = fh.read(k * row_bytes)
                if len(buf) < k * row_bytes:  # the file shrank since its header was read
                    raise InputError(f"{ref.where()} is truncated", "re-create the file")
                if ref.crc is not None:
                    crc = zlib.crc32(buf, crc)
                yield start, np.frombuffer(buf, ref.dtype).reshape((k, *item_shape))
            if ref.crc is not None:
                _check_crc(fh, ref, crc)
        return
    try:
        yield from _stream_member(ref, B, rows, row_bytes, item_shape)
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as exc:
        raise InputError(f"{ref.where()} is damaged ({exc})", "re-create the file") from None


def _check_crc(fh, ref: ArrayRef, crc: int | None = None) -> None:
    """Check a stored member's bytes against the archive's CRC-32: all of them (``crc`` None),
    or those from ``fh``'s position on, ``crc`` being the CRC-32 of those before it."""
    start, size, want = ref.crc
    if crc is None:
        fh.seek(start)
        crc = 0
    left = start + size - fh.tell()
    while left > 0:
        buf = fh.read(min(left, 1 << 24))
        if not buf:
            break
        crc, left = zlib.crc32(buf, crc), left - len(buf)
    if crc != want:
        raise InputError(
            f"{ref.where()} is damaged: its bytes do not match the archive's CRC-32",
            "re-create the file",
        )


def _stream_member(ref: ArrayRef, B: int, rows: int, row_bytes: int, item_shape: tuple):
    """The rows of a compressed member (zipfile checks the CRC-32 at the member's end)."""
    with open_regular(ref.path, ref.label) as raw, zipfile.ZipFile(raw) as zf:
        with zf.open(ref.member) as fp:
            read_header(fp, ref.where(), ref.available)
            for start in range(0, B, rows):
                k = min(rows, B - start)
                buf = fp.read(k * row_bytes)
                if len(buf) < k * row_bytes:
                    raise InputError(f"{ref.where()} is truncated", "re-create the file")
                yield start, np.frombuffer(buf, ref.dtype).reshape((k, *item_shape))
            while fp.read(1 << 24):  # to the member's end, where zipfile checks its CRC-32
                pass


def read_small(ref: ArrayRef):
    """The whole of a small array (at most SMALL_BYTES), or None; never unpickles, never raises."""
    if ref.problem or ref.dtype is None or ref.dtype.hasobject or ref.nbytes > SMALL_BYTES:
        return None
    try:
        blocks = [b for _, b in iter_rows(ref, max(1, ref.shape[0] if ref.shape else 1))]
        if not ref.shape:
            return blocks[0][0] if blocks else None
        return np.concatenate(blocks) if blocks else np.empty(ref.shape, ref.dtype)
    except Exception:  # noqa: BLE001 - optional data: unreadable means absent
        return None
