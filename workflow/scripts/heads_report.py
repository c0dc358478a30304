"""Rule `heads_report`: which estimator names the knee, figures H1 and H2, the summary page
(docs/method.md §9, exploratory: no verdict)."""

import eb_entry  # noqa: F401  first: the rule's log, then this clone's library

from entropic_bound.config.provenance import provenance
from entropic_bound.core.io import read_table, write_table, write_text
from entropic_bound.core.runner import run
from entropic_bound.figures.draw import save_figure
from entropic_bound.heads.figure import figure_curve, figure_knees
from entropic_bound.heads.reliability import reliability
from entropic_bound.heads.report import (
    SENSITIVITY_FRACTIONS,
    agreement,
    knee_sensitivity,
    summary_markdown,
)
from entropic_bound.heads.stage import model_facts


def main(sm):
    cfg = sm.params.heads
    taus = cfg["measure"]["taus"]
    prov = provenance(cfg, rule="heads_report", exploratory=True)
    table, curve = read_table(sm.input.table), read_table(sm.input.curve)
    rel = reliability(read_table(sm.input.windows), cfg["measure"], cfg["seed"])
    write_table(rel, sm.output.reliability, prov)
    table = table.merge(rel.drop(columns="knee"), on=["layer", "head"], how="left")
    agree = agreement(table, taus)
    write_table(agree, sm.output.agreement, prov)
    sens = knee_sensitivity(table, read_table(sm.input.curves), SENSITIVITY_FRACTIONS)
    write_table(sens, sm.output.sensitivity, prov)
    facts = model_facts(sm.input.model)
    write_text(sm.output.md, summary_markdown(table, agree, facts, sens), prov)
    save_figure(figure_knees(table, agree, taus), sm.output.png, sm.output.pdf, prov)
    save_figure(figure_curve(curve), sm.output.curve_png, sm.output.curve_pdf, prov)


run(main, snakemake)  # noqa: F821
