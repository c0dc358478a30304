"""Every fenced ```python block of README.md and docs/*.md runs as written, each in a fresh
interpreter in an empty folder (files it writes stay there). A block may be skipped only with a
visible marker on its first line, ``# doc-test: skip (<reason>)``, whose reason is not empty."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
SKIP = re.compile(r"^# doc-test: skip \((.+)\)$")


def snippets(paths=DOCS) -> list[tuple[str, str]]:
    """(``file:line``, code) of every python block, in order."""
    out = []
    for path in paths:
        text = path.read_text(encoding="utf-8")
        for m in BLOCK.finditer(text):
            line = text[: m.start()].count("\n") + 1
            out.append((f"{path.relative_to(REPO)}:{line}", m.group(1)))
    return out


def skip_reason(code: str) -> str | None:
    first = code.splitlines()[0] if code.strip() else ""
    m = SKIP.match(first.strip())
    return m.group(1).strip() or None if m else None


def run_snippet(code: str, where: Path) -> subprocess.CompletedProcess:
    import entropic_bound

    src = str(Path(entropic_bound.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": src, "OMP_NUM_THREADS": "1", "MPLBACKEND": "Agg"}
    return subprocess.run(
        [sys.executable, "-c", code], cwd=where, env=env, capture_output=True, text=True
    )


SNIPPETS = snippets()


def test_the_docs_have_python_snippets():
    assert len(SNIPPETS) >= 5


@pytest.mark.parametrize("where,code", SNIPPETS, ids=[w for w, _ in SNIPPETS])
def test_every_python_snippet_runs(where, code, tmp_path):
    if code.lstrip().startswith("# doc-test: skip"):
        reason = skip_reason(code)
        assert reason, f"{where}: a skipped snippet must say why: # doc-test: skip (<reason>)"
        pytest.skip(f"{where}: {reason}")
    done = run_snippet(code, tmp_path)
    assert done.returncode == 0, f"{where} fails:\n{done.stderr[-3000:]}"


def test_a_failing_snippet_fails_and_a_skip_needs_a_reason(tmp_path):
    doc = tmp_path / "x.md"
    doc.write_text(
        "text\n```python\nraise SystemExit(3)\n```\n```python\n# doc-test: skip ()\n```\n"
    )
    found = [m.group(1) for m in BLOCK.finditer(doc.read_text())]
    assert found == ["raise SystemExit(3)\n", "# doc-test: skip ()\n"]
    assert run_snippet(found[0], tmp_path).returncode == 3
    assert skip_reason(found[1]) is None
    assert skip_reason("# doc-test: skip (Snakemake syntax)\nx") == "Snakemake syntax"
