"""The claims table for people: claims.md (Markdown) and the terminal summary."""

from __future__ import annotations

import pandas as pd

from entropic_bound.claims.verdict import (
    ILL_POSED,
    INSUFFICIENT,
    MISSING,
    NOT_REPRODUCED,
    REPRODUCED,
)

VERDICTS = (REPRODUCED, NOT_REPRODUCED, INSUFFICIENT, ILL_POSED, MISSING)


def _counts(table: pd.DataFrame) -> str:
    counts = table["verdict"].value_counts()
    return ", ".join(
        f"{counts.get(v, 0)} {v}" for v in VERDICTS if counts.get(v, 0) or v in VERDICTS[:2]
    )


def side_by_side(table: pd.DataFrame) -> list[str]:
    """Markdown lines: claim | v1 | v2 (and v2's headline number)."""
    v1 = table[table["registration"] == "v1"].set_index("claim")
    v2 = table[table["registration"] == "v2"].set_index("claim")
    lines = ["| claim | v1 | v2 | v2 headline (value / threshold, n) |", "|---|---|---|---|"]
    for cid in v1.index.union(v2.index, sort=False):
        a = v1["verdict"].get(cid, "")
        b = v2["verdict"].get(cid, "")
        head = ""
        if cid in v2.index and isinstance(v2.at[cid, "headline"], str):
            r = v2.loc[cid]
            head = f"{r['headline']}: {r['headline_value']:.3g} / {r['headline_threshold']:.3g}, n = {r['headline_n']:.0f}"
        lines.append(f"| {cid} | **{a}** | **{b}** | {head} |")
    return lines


def claims_markdown(table: pd.DataFrame, provenance: dict | None = None) -> str:
    """A readable claims.md: both registrations side by side, then v1's table and sections,
    then v2's (docs/method.md §5, §5b)."""
    lines = ["# Claims of arXiv 2607.23050: verdicts", ""]
    if provenance:
        lines += [
            f"Run `{provenance.get('run_name')}`, config hash `{provenance.get('config_hash')}`, "
            f"commit `{provenance.get('git_commit')}`. Thresholds: `config/claims.yaml`.",
            "",
        ]
    lines += ["## Registrations v1 and v2 side by side", "", *side_by_side(table), ""]
    for reg, part in table.groupby("registration", sort=False):
        lines += _registration(reg, part)
    return "\n".join(lines)


def _registration(reg: str, table: pd.DataFrame) -> list[str]:
    title = {"v1": "v1 (the original tests)", "v2": "v2 (tests against each class's own bound)"}
    lines = [
        f"## Registration {title.get(reg, reg)}",
        "",
        _counts(table),
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
            f"### {reg} {r.claim}: {r.verdict}",
            "",
            f"> {r.statement}",
            "",
            f"* test: {r.threshold}",
            f"* measured: {r.measured}",
            "",
        ]
    return lines


def claims_text(table: pd.DataFrame, width: int = 100) -> str:
    """The claims table for a terminal: claim, verdict, measured (truncated)."""
    lines = [f"{'reg':<4}{'claim':<6}{'verdict':<24}measured"]
    for r in table.itertuples(index=False):
        m = r.measured if len(r.measured) <= width else r.measured[: width - 1] + "…"
        lines.append(f"{r.registration:<4}{r.claim:<6}{r.verdict:<24}{m}")
    return "\n".join(lines)
