"""The text the pretrained heads read: English prose that ships with every Debian system, never
downloaded, each file pinned by its SHA-256, and the rule that makes one text of several files.

The corpus ``common-licenses``: the licence texts of ``/usr/share/common-licenses/``, installed by
``base-files``, a package every Debian system has (it is *Essential*: it cannot be removed),
whatever else is installed. The texts are the licences' own, which their authors no longer
change, so the files are the same from one machine and one Debian point release to the next
(the digests below are Debian 12's, base-files 12.4+deb12u11). A licence an older version of
which is also there is read once, in its newer version: GFDL-1.2, GPL-1, GPL-2 and LGPL-2 are
left out (their 8-word shingles lie 48-97 % in a kept text); of the ten kept, no file has more
than 14 % of its shingles in another. About 161 kB: legal English, formal and repetitive, and
frequent in the web and code crawls models are trained on, so a model may know much of it by
heart; that is what these heads read, and the records say so.

The manual pages and the ``copyright`` files under ``/usr/share/doc`` were not chosen: which of
them exist depends on the packages installed. The standard library's docstrings depend on the
Python version.

Joining (:func:`join_texts`, for any text files): each file is split into paragraphs at blank
lines, every run of whitespace inside a paragraph (hard line breaks, indentation, form feeds)
becomes one space, and the paragraphs, of one file and then of the next, are joined by a blank
line. The line breaks of a text file are its typesetting: read as they are, a decoder's windows
would hold more tokens of indentation than of words.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from entropic_bound.pretrained.errors import PretrainedError

#: the corpora by name: (root, {file name: its SHA-256}), the files in the order they are read
CORPORA = {
    "common-licenses": (
        "/usr/share/common-licenses",
        {
            "Apache-2.0": "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30",
            "Artistic": "b7fd9b73ea99602016a326e0b62e6646060d18febdd065ceca8bb482208c3d88",
            "BSD": "5d588eb3b157d52112afea935c88a7ff9efddc1e2d95a42c25d3b96ad9055008",
            "CC0-1.0": "a2010f343487d3f7618affe54f789f5487602331c0a8d03f49e9a7c547cf0499",
            "GFDL-1.3": "110535522396708cea37c72a802c5e7e81391139f5f7985631c93ef242b206a4",
            "GPL-3": "3972dc9744f6499f0f9b2dbf76696f2ae7ad8af9b23dde66d6af86c9dfb36986",
            "LGPL-2.1": "dc626520dcd53a22f727af3ee42c770e56c97a64fe3adb063799d8ab032fe551",
            "LGPL-3": "e3a994d82e644b03a792a930f574002658412f62407f5fee083f2555c5f23118",
            "MPL-1.1": "f849fc26a7a99981611a3a370e83078deb617d12a45776d6c4cada4d338be469",
            "MPL-2.0": "fab3dd6bdab226f1c08630b1dd917e11fcb4ec5e1e020e2c16f83a0a13863e85",
        },
    ),
}
#: how :func:`join_texts` joins, in the words of the manifest
JOIN_RULE = (
    "each file split into paragraphs at blank lines, every run of whitespace in a paragraph "
    "made one space, paragraphs and files joined by one blank line ('\\n\\n')"
)
_BLANK_LINE = re.compile(r"\n[^\S\n]*\n")


def sha256_file(path) -> str:
    """The SHA-256 of a file, read in blocks of 16 MiB."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 24), b""):
            h.update(block)
    return h.hexdigest()


def read_text(path) -> tuple[str, bytes]:
    """A UTF-8 text file's text and bytes, or one line that says why it cannot be read."""
    path = Path(path)
    if not path.exists():
        raise PretrainedError(f"text file {path} does not exist", "check the path")
    if not path.is_file():
        raise PretrainedError(f"text file {path} is not a regular file", "give a text file")
    raw = path.read_bytes()
    try:
        return raw.decode("utf-8"), raw
    except UnicodeDecodeError as exc:
        raise PretrainedError(
            f"text file {path} is not UTF-8 text (byte {exc.start})", "convert it to UTF-8"
        ) from None


def join_texts(texts: list[str]) -> str:
    """One text of several (the module docstring's rule, :data:`JOIN_RULE`)."""
    paragraphs = []
    for text in texts:
        for part in _BLANK_LINE.split(text.replace("\r\n", "\n")):
            flat = " ".join(part.split())
            if flat:
                paragraphs.append(flat)
    return "\n\n".join(paragraphs)


def corpus_files(name: str, root=None) -> list[tuple[Path, str]]:
    """The files of corpus ``name`` (under ``root``, default its own) with their pinned SHA-256,
    each checked: a missing or changed file is one line."""
    if name not in CORPORA:
        raise PretrainedError(f"no corpus named {name!r}", f"known: {', '.join(CORPORA)}")
    default, files = CORPORA[name]
    folder = Path(root or default)
    out = []
    for file, digest in files.items():
        path = folder / file
        if not path.is_file():
            raise PretrainedError(
                f"corpus {name}: {path} is missing",
                "install the package that ships it (base-files on Debian)",
            )
        found = sha256_file(path)
        if found != digest:
            raise PretrainedError(
                f"corpus {name}: {path} has SHA-256 {found[:16]}…, not the pinned {digest[:16]}…",
                "this system ships another version of the file; the corpus is not the same",
            )
        out.append((path, digest))
    return out


def read_texts(paths) -> tuple[str, list[dict]]:
    """The joined text of ``paths`` and, per file, its path, bytes and SHA-256."""
    texts, records = [], []
    for p in paths:
        text, raw = read_text(p)
        texts.append(text)
        digest = hashlib.sha256(raw).hexdigest()
        records.append({"path": str(Path(p).absolute()), "bytes": len(raw), "sha256": digest})
    return join_texts(texts), records
