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

#: v4's further words: the data cannot tell the claim from its negation; a theorem of the setting
NO_POWER, VALIDATED = "no power", "validated"
VERDICTS = (REPRODUCED, NOT_REPRODUCED, VALIDATED, NO_POWER, INSUFFICIENT, ILL_POSED, MISSING)


def _counts(table: pd.DataFrame) -> str:
    counts = table["verdict"].value_counts()
    return ", ".join(
        f"{counts.get(v, 0)} {v}" for v in VERDICTS if counts.get(v, 0) or v in VERDICTS[:2]
    )


def side_by_side(table: pd.DataFrame) -> list[str]:
    """Markdown lines: claim | v1 | v2 | v3 | the current registration's headline number."""
    regs = [r for r in ("v1", "v2", "v3", "v4") if (table["registration"] == r).any()]
    by = {r: table[table["registration"] == r].set_index("claim") for r in regs}
    last = regs[-1]
    lines = [
        "| claim | " + " | ".join(regs) + f" | {last} headline (value / threshold, n) |",
        "|---|" + "---|" * (len(regs) + 1),
    ]
    claims = list(dict.fromkeys(c for r in regs for c in by[r].index))
    for cid in claims:
        verdicts = [f"**{by[r]['verdict'].get(cid, '')}**" for r in regs]
        head = ""
        cur = by[last]
        if cid in cur.index and isinstance(cur.at[cid, "headline"], str) and last != "v4":
            r = cur.loc[cid]
            head = (
                f"{r['headline']}: {r['headline_value']:.3g} / {r['headline_threshold']:.3g}, "
                f"n = {r['headline_n']:.0f}"
            )
        lines.append(f"| {cid} | " + " | ".join(verdicts) + f" | {head} |")
    return lines


def subclaim_lines(sub: pd.DataFrame) -> list[str]:
    """Markdown lines: v4 sub-claim by sub-claim, one line each (fragment, value / threshold,
    denominator, word); validations and lines beyond the abstract marked as such."""
    lines = [
        "| sub-claim | role | the abstract's words | value (threshold), n | verdict |",
        "|---|---|---|---|---|",
    ]
    for r in sub.itertuples(index=False):
        value = ""
        if isinstance(r.sense, str) and pd.notna(r.value):
            value = f"{r.value:.3g} ({r.sense} {r.threshold:.3g}), n = {r.n:.0f}"
        frag = r.fragment.replace("|", "/")
        lines.append(f"| {r.subclaim} | {r.role} | {frag} | {value} | **{r.verdict}** |")
    return lines


def headline_lines(table: pd.DataFrame, sub: pd.DataFrame) -> list[str]:
    """The README's results table: v4 sub-claim by sub-claim (value, threshold, denominator,
    word), each claim's v4 word on its first line with v3's and v1's beside it."""
    word = {(r.registration, r.claim): r.verdict for r in table.itertuples(index=False)}
    lines = [
        "| claim | v1 | v3 | v4 | v4 line | the abstract's words it answers | value (threshold), n "
        "| line's word |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for cid, part in sub.groupby("claim", sort=False):
        for i, r in enumerate(part.itertuples(index=False)):
            value = ""
            if isinstance(r.sense, str) and pd.notna(r.value):
                value = f"{r.value:.3g} ({r.sense} {r.threshold:.3g}), n = {r.n:.0f}"
            regs = [word.get((reg, cid), "") for reg in ("v1", "v3", "v4")]
            plain = (REPRODUCED, VALIDATED, "")
            head = " | ".join(w if w in plain else f"**{w}**" for w in regs)
            lead = f"{cid} | {head}" if i == 0 else " | | | "
            words = r.fragment.replace("|", "/")
            if r.role != "counted":
                words = f"*{r.role}:* {words}"
            lines.append(f"| {lead} | {r.subclaim} | {words} | {value} | {r.verdict} |")
    return lines


def claims_markdown(
    table: pd.DataFrame,
    provenance: dict | None = None,
    controls: pd.DataFrame | None = None,
    subclaims: pd.DataFrame | None = None,
) -> str:
    """A readable claims.md: the registrations side by side, v4 sub-claim by sub-claim (when
    given), then each registration's table and sections (docs/method.md §5–§5d), then the
    controls table (every check on a planted true and a planted false input) when given."""
    lines = ["# Claims of arXiv 2607.23050: verdicts", ""]
    if provenance:
        lines += [
            f"Run `{provenance.get('run_name')}`, config hash `{provenance.get('config_hash')}`, "
            f"commit `{provenance.get('git_commit')}`. Thresholds: `config/claims.yaml`.",
            "",
        ]
    current = "v4" if (table["registration"] == "v4").any() else "v3"
    lines += [
        f"## The registrations side by side ({current} is the current one)",
        "",
        *side_by_side(table),
        "",
    ]
    if subclaims is not None and len(subclaims):
        lines += [
            "## Registration v4, sub-claim by sub-claim (docs/method.md §5d)",
            "",
            "A claim is reproduced when every counted sub-claim is; a validation is a theorem of "
            "the setting (shown, never counted); a line beyond the abstract is outside the verdict.",
            "",
            *subclaim_lines(subclaims),
            "",
        ]
    for reg, part in table.groupby("registration", sort=False):
        lines += _registration(reg, part)
    if controls is not None:
        from entropic_bound.claims.controls import controls_markdown

        lines += controls_markdown(controls)
    return "\n".join(lines)


def _registration(reg: str, table: pd.DataFrame) -> list[str]:
    title = {
        "v1": "v1 (the original tests)",
        "v2": "v2 (tests against each class's own bound)",
        "v3": "v3 (every check able to fail, best-known bounds)",
        "v4": "v4 (the abstract's sentences as sub-claims; the current registration)",
    }
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
