"""The project speaks of itself, not of how it was written: no tracked text numbers the sittings
in which work was done ("the sixth session", "this session"), cites a tracker a reader cannot
open ("issue 32", "#12"), or names who reviewed or helped ("a helper's review", "an audit by").
A dated measurement gives its date, its commit and what was measured; a fix gives what was
wrong and the commit that fixed it.

Legitimate uses of these words stay: a process, SSH or pytest session, a helper *function*, the
registered ε_task audit, an upstream issue named by its repository
(`snakemake/snakemake-executor-plugin-slurm#473`). Files that are never edited are allowed
whole, each with its reason (`ALLOWED`)."""

from __future__ import annotations

import fnmatch
import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

#: what is read: tracked text of these kinds
SUFFIXES = set(".md .py .smk .yaml .yml .sh .rst .txt .toml .cfg .c .h".split())
NAMES = {"Makefile", "Snakefile"}

_ORDINAL = (
    r"first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|\d+(?:st|nd|rd|th)"
    r"|this|that|previous|last|next|same|another|other|two|three|four|five|helper|lead"
)

#: kind -> patterns (case-insensitive). Each is narrow on purpose: it names the narration, not
#: the word (see the module docstring for what stays).
PATTERNS: dict[str, list[re.Pattern]] = {
    "session": [
        # "the sixth session", "this session", "other sessions' jobs", "a helper session"
        re.compile(rf"\b(?:{_ORDINAL})(?:['’]s)?\s+sessions?\b", re.I),
        # "Session of 12-05", "the session asked for a GPU", "the session's time was up"
        re.compile(r"\bsessions?\s+of\s+(?:the\s+)?\d", re.I),
        re.compile(r"\bthe\s+session\b", re.I),
        re.compile(r"\bsittings?\b", re.I),
    ],
    "issue": [
        # "issue 32", "issues 23 and 24", "Issue 30 item 5", "issue #12"
        re.compile(r"\bissues?\s+#?\d+", re.I),
        # "the target", "of the issue" (a tracker's item, without its number)
        re.compile(r"\b(?:the|this|that)\s+issue(?:['’]s)?\b", re.I),
        # a bare tracker number: "#12", "(#473)"; not owner/repo#473, an anchor, a colour or &#1;
        re.compile(r"(?<![\w/.&'\"#-])#\d{1,5}(?![\w-])"),
    ],
    "person": [
        re.compile(r"\breviewers?\b|\bauditors?\b", re.I),
        # "reviewed by the lead", "an audit by ..."; not "checked by a test", "audit by hand"
        re.compile(r"\b(?:reviewed|audited|audit|review)\s+by\b(?!\s+hand\b)", re.I),
        # "an audit found", "An audit of v2 ... found", "the audit's"
        re.compile(r"\b(?:an|the)\s+audit(?:['’]s|\s+(?:of|found)\b)", re.I),
        # a helper as a person: possessive, or doing something
        re.compile(r"\bhelpers?['’](?:s\b)?", re.I),
        re.compile(
            r"\bhelpers?\s+(?:reviewed|reviews|worked|works|ran|runs|found|finds|said|says|wrote"
            r"|checked|asked|noted|running)\b",
            re.I,
        ),
        re.compile(
            r"\b(?:a|no|two|three|four|another)\s+helpers?\b"
            r"(?!\s+(?:function|functions|module|script|class|method|for|to|that|which)\b)",
            re.I,
        ),
        re.compile(r"\bthe\s+lead['’]s\b|\bthe\s+lead\s+(?:ran|worked|asked|reviewed)\b", re.I),
    ],
}

#: path (a glob: ``*`` spans folders) -> why it is not read
ALLOWED = {
    "config/claims.yaml": "registrations v1-v3: never edited once committed (a change is a new "
    "registration)",
    "config/heads_claims.yaml": "registration H1: never edited once committed; its comment cites "
    "the tracker item it was drafted under",
    "config/heads_claims_h2.yaml": "registration H2: never edited once committed",
    "config/heads_claims_h3.yaml": "registration H3: never edited once committed",
    "benchmarks/registered/*/*": "registered outputs and their RUN.md: committed before they "
    "were read, never edited (the folders' index, benchmarks/registered/README.md, is read)",
    "tests/packaging/test_words.py": "this checker: its patterns and planted texts",
}


def narration(text: str) -> list[tuple[int, str, str]]:
    """(line number, kind, matched words) for every narration in ``text``."""
    found = []
    for i, line in enumerate(text.splitlines(), 1):
        for kind, patterns in PATTERNS.items():
            for pattern in patterns:
                for m in pattern.finditer(line):
                    found.append((i, kind, m.group(0)))
    return found


def _allowed(path: str) -> bool:
    return any(fnmatch.fnmatchcase(path, a) for a in ALLOWED)


def tracked_text() -> list[str]:
    try:
        out = subprocess.run(
            ["git", "-C", str(REPO), "ls-files", "-z"], capture_output=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    paths = [p for p in out.decode().split("\0") if p]
    return [
        p
        for p in paths
        if (Path(p).suffix in SUFFIXES or Path(p).name in NAMES)
        and not _allowed(p)
        and (REPO / p).is_file()
    ]


def test_no_tracked_text_narrates_how_it_was_written():
    paths = tracked_text()
    assert len(paths) > 100 and "docs/notebook.md" in paths
    hits = [
        f"{p}:{line}: {kind}: {words!r}"
        for p in paths
        for line, kind, words in narration((REPO / p).read_text(errors="ignore"))
    ]
    assert not hits, "narration instead of substance:\n" + "\n".join(hits)


def test_every_allowed_path_exists():
    for pattern in ALLOWED:
        assert list(REPO.glob(pattern)), f"ALLOWED names {pattern}, which matches nothing"


PLANTED = """\
### 2026-12-07 (sixth session) · the large run
The 2-thread run starved beside other sessions' jobs; this session took 25 job-s out.
Session of 12-05: 84.9 s. The session asked for a GPU. Written at one sitting.
Fixed the hang (issue 13); issues 23 and 24 asked for it; Issue 30 item 5 is not met (#41).
The issue's target is < 60 s.
A helper reviewed both cuts; widened after a helper's review; loaded by a helper; no helper ran.
An audit of v2 found checks that cannot fail; the audit's 1.96x; reviewed by the lead.
The reviewer asked for tests. `nice` does not protect the lead's jobs.
"""

CLEAN = """\
### 2026-12-07 · the large run at `a42305a`
Snakemake must outlive your SSH session; it lives in the process session it was started in.
The pytest session's exit status is kept; def pytest_sessionfinish(session, exitstatus).
Arrow aborts at teardown (apache/arrow#34314; snakemake/snakemake-executor-plugin-slurm#473).
Small axis helpers; the helpers and input functions; a helper function for the grid.
The ε_task audit re-judged no task; its audit by hand; checked by a test; [link](#2026-12-07--the-run); '#000000'.
Fixed at `59af0b7` (2026-12-07): Cholesky failed on one of 16 384 sequences.
"""


def test_planted_narration_is_caught_and_clean_text_is_not():
    found = narration(PLANTED)
    kinds = {kind for _, kind, _ in found}
    assert kinds == {"session", "issue", "person"}
    # every planted line is caught
    assert {line for line, _, _ in found} == set(range(1, PLANTED.count("\n") + 1))
    words = {w.lower() for _, _, w in found}
    for expected in (
        "sixth session",
        "this session",
        "other sessions",
        "session of 1",
        "the session",
        "sitting",
        "issue 13",
        "issues 23",
        "issue 30",
        "#41",
        "the issue's",
        "helper reviewed",
        "helper's",
        "a helper",
        "no helper",
        "an audit of",
        "the audit's",
        "reviewed by",
        "reviewer",
        "the lead's",
    ):
        assert expected in words, f"{expected!r} not caught: {sorted(words)}"
    assert narration(CLEAN) == []
