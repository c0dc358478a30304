"""The documentation points only at things that exist: every relative link of the README and
docs/ resolves to a file (and an anchor, to a heading of it); the specification cited is
docs/method.md; the README stays a README."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCS = [REPO / "README.md", REPO / "config" / "README.md", *sorted((REPO / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _anchor(heading: str) -> str:
    """GitHub's anchor of a Markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    return {_anchor(m.group(1)) for m in re.finditer(r"^#+\s+(.*)$", path.read_text(), re.M)}


@pytest.mark.parametrize("doc", DOCS, ids=[str(d.relative_to(REPO)) for d in DOCS])
def test_every_relative_link_resolves(doc):
    broken = []
    for target in LINK.findall(doc.read_text()):
        if re.match(r"^[a-z]+:", target):  # http:, https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        dest = (doc.parent / path).resolve() if path else doc
        if not dest.exists():
            broken.append(target)
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            broken.append(target)
    assert not broken, f"{doc.name}: links to nothing: {broken}"


def test_a_broken_link_is_caught(tmp_path):
    """The checker itself fails on a fabricated broken link (and passes a good one)."""
    good = tmp_path / "a.md"
    good.write_text("# Title\n\n[ok](a.md#title) [bad](nope.md) [bad anchor](a.md#nope)\n")
    found = [t for t in LINK.findall(good.read_text())]
    assert found == ["a.md#title", "nope.md", "a.md#nope"]
    assert "title" in _anchors(good) and "nope" not in _anchors(good)


def test_the_specification_cited_is_in_the_repository():
    cited = []
    for path in REPO.rglob("*"):
        if any(p in path.parts for p in (".git", ".venv", "results", ".snakemake")):
            continue
        if path.is_file() and path.suffix in (".py", ".md", ".smk", ".yaml", ".rst", ".toml"):
            if "SCIENCE" + ".md" in path.read_text(errors="ignore"):
                cited.append(str(path.relative_to(REPO)))
    assert not cited, cited
    assert (REPO / "docs" / "method.md").is_file()


def test_the_readme_fits_on_two_screens():
    assert len((REPO / "README.md").read_text().splitlines()) <= 220
