"""The documentation points only at things that exist: every relative link of the README and
docs/ resolves to a file (and an anchor, to a heading of it); every path of the repository its
prose names (`tests/workflow/test_workflow.py::test_x`, `src/...`, `workflow/rules/...`) exists,
with the test it names; the specification cited is docs/method.md; the README stays a
README."""

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


#: the folders of the repository whose files the documents cite by path
TOP = (
    "tests",
    "src",
    "workflow",
    "benchmarks",
    "config",
    "envs",
    "profiles",
    "requirements",
    "docs",
)
#: a cited path (from a top folder, ending in a word character), and the test it names after ::
CITED = re.compile(r"(?<![\w./-])((?:" + "|".join(TOP) + r")/[\w./-]*\w)(?![\w{<*])(?:::(\w+))?")
FENCE = re.compile(r"^```.*?^```", re.M | re.S)
#: the notebook is a dated record (append-only): it names files as they were then
CITING = [d for d in DOCS if d.name != "notebook.md"]


def cited_paths_missing(text: str) -> list[str]:
    """Paths that ``text``'s prose (fenced code left out: a user's own files) names and the
    repository lacks, and ``path::test`` whose file defines no such function. A path under
    config/ may name a module of the package (``config/provenance.py``: src/entropic_bound/...),
    as the README's library tables do."""
    missing = []
    for m in CITED.finditer(FENCE.sub("", text)):
        path, func = m.group(1), m.group(2)
        found = [p for p in (REPO / path, REPO / "src" / "entropic_bound" / path) if p.exists()]
        if not found:
            missing.append(path)
        elif func and not re.search(rf"^\s*def {func}\b", found[0].read_text(), re.M):
            missing.append(f"{path}::{func}")
    return missing


@pytest.mark.parametrize("doc", CITING, ids=[str(d.relative_to(REPO)) for d in CITING])
def test_every_cited_path_exists(doc):
    missing = cited_paths_missing(doc.read_text())
    assert not missing, f"{doc.name} cites what the repository lacks: {missing}"


def test_a_moved_test_file_or_a_renamed_test_is_caught():
    text = (
        "`tests/test_workflow.py` moved; `tests/workflow/test_workflow.py::test_nope` is no "
        "test; `tests/workflow/test_workflow.py::test_every_artifact` and `config/provenance.py` "
        "exist; `config/scale/d<d>.yaml` is a pattern.\n```\nconfigfile: config/mine.yaml\n```\n"
    )
    assert cited_paths_missing(text) == [
        "tests/test_workflow.py",
        "tests/workflow/test_workflow.py::test_nope",
    ]
