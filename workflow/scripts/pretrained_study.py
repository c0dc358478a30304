"""Rule `pretrained_study`: every measured pretrained model named by registration H3, its
verdicts (docs/method.md §9e), the per-model tables, the figure and SHA256SUMS of them all."""

import hashlib
import json
from pathlib import Path

import eb_entry  # noqa: F401  first: the rule's log, then this clone's library

from entropic_bound.config.provenance import provenance
from entropic_bound.core.io import write_table, write_text
from entropic_bound.core.runner import run


def main(sm):
    from entropic_bound.heads.report import markdown_table as markdown
    from entropic_bound.pretrained.figure import figure_pretrained
    from entropic_bound.pretrained.h3 import eligible, evaluate
    from entropic_bound.pretrained.study import (
        check_tolerance,
        knee_summary,
        load_h3,
        pooled,
        qk_removed,
        registered_names,
        words_table,
    )

    cfg = sm.params.cfg
    reg = load_h3(sm.input.registration)
    names = registered_names(sm.params.models, reg)
    tables = dict(zip(sm.params.model_names, map(Path, sm.input.heads), strict=True))
    heads = pooled(tables, names)
    check_tolerance(heads, reg)
    verdicts = evaluate(heads[heads["registered"]], reg)
    keep = eligible(heads, reg)
    heads["eligible"] = keep
    out = {
        "heads": heads,
        "verdicts": verdicts,
        "knees": knee_summary(heads, keep),
        "compression": qk_removed(heads),
        "words": words_table(heads),
    }
    for name, frame in out.items():
        write_table(frame, getattr(sm.output, name))
    fig = figure_pretrained(heads)
    fig.savefig(sm.output.figure, dpi=150, metadata={"Software": None})
    prov = provenance(cfg, rule="pretrained_study", registration=reg["name"])
    sections = [
        f"# Pretrained heads under registration {reg['name']} (registered {reg['registered']})",
        "Every number below is computed by rule `pretrained_study` from the measured heads.",
        "## Verdicts",
        markdown(verdicts.drop(columns=["note"])),
        "## Knees per model",
        markdown(out["knees"]),
        "## Query-key parameters the plain knees would remove (1 % tolerance)",
        markdown(out["compression"]),
        "## predict's words",
        markdown(out["words"]),
        "## Provenance",
        "```\n" + json.dumps(prov, indent=2, sort_keys=True) + "\n```",
    ]
    write_text(sm.output.report, "\n\n".join(sections) + "\n")
    files = [getattr(sm.output, k) for k in (*out, "figure", "report")]
    sums = "".join(f"{_sha256(p)}  {Path(p).name}\n" for p in files)
    write_text(sm.output.sums, sums)


def _sha256(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


run(main, snakemake)  # noqa: F821
