"""The claims table for people: claims.md (Markdown) and the terminal summary."""

from __future__ import annotations

import pandas as pd

from entropic_bound.claims.verdict import MISSING, NOT_REPRODUCED, REPRODUCED


def claims_markdown(table: pd.DataFrame, provenance: dict | None = None) -> str:
    """A readable claims.md: a verdict summary, then one section per claim."""
    counts = table["verdict"].value_counts()
    lines = ["# Claims of arXiv 2607.23050: verdicts", ""]
    if provenance:
        lines += [
            f"Run `{provenance.get('run_name')}`, config hash `{provenance.get('config_hash')}`, "
            f"commit `{provenance.get('git_commit')}`. Thresholds: `config/claims.yaml`.",
            "",
        ]
    lines += [
        ", ".join(f"{counts.get(v, 0)} {v}" for v in (REPRODUCED, NOT_REPRODUCED, MISSING)),
        "",
        "| claim | verdict | measured |",
        "|---|---|---|",
    ]
    for r in table.itertuples(index=False):
        measured = r.measured.replace("|", "\\|")  # a literal bar inside a Markdown table cell
        lines.append(f"| {r.claim} | **{r.verdict}** | {measured} |")
    lines.append("")
    for r in table.itertuples(index=False):
        lines += [
            f"## {r.claim}: {r.verdict}",
            "",
            f"> {r.statement}",
            "",
            f"* test: {r.threshold}",
            f"* measured: {r.measured}",
            "",
        ]
    return "\n".join(lines)


def claims_text(table: pd.DataFrame, width: int = 100) -> str:
    """The claims table for a terminal: claim, verdict, measured (truncated)."""
    lines = [f"{'claim':<6}{'verdict':<16}measured"]
    for r in table.itertuples(index=False):
        m = r.measured if len(r.measured) <= width else r.measured[: width - 1] + "…"
        lines.append(f"{r.claim:<6}{r.verdict:<16}{m}")
    return "\n".join(lines)
