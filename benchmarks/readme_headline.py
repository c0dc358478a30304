"""Write the README's results table from the shipped reference (benchmarks/reference/paper/:
claims.csv and subclaims.csv), between the markers ``<!-- headline:start -->`` and
``<!-- headline:end -->``; tests/packaging/test_facts.py fails when the two drift apart.

    python benchmarks/readme_headline.py          # after benchmarks/make_reference.py
"""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import pandas as pd

from entropic_bound.claims.report import headline_lines

REPO = Path(__file__).resolve().parents[1]
START, END = "<!-- headline:start -->", "<!-- headline:end -->"


def reference_table(name: str, ref: Path = REPO / "benchmarks" / "reference" / "paper"):
    """A reference table (its provenance lines, '#', skipped)."""
    text = gzip.decompress((ref / f"{name}.csv.gz").read_bytes()).decode()
    return pd.read_csv(io.StringIO(text), comment="#")


def headline_block() -> str:
    lines = headline_lines(reference_table("claims"), reference_table("subclaims"))
    return "\n".join([START, *lines, END])


def with_headline(readme: str) -> str:
    """The README's text with its results table replaced by :func:`headline_block`."""
    i, j = readme.index(START), readme.index(END) + len(END)
    return readme[:i] + headline_block() + readme[j:]


if __name__ == "__main__":
    path = REPO / "README.md"
    path.write_text(with_headline(path.read_text()))
    print(f"README.md's results table rewritten from {REPO / 'benchmarks/reference/paper'}")
