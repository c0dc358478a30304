"""Rule `heads_study_predict`: entropic-bound predict (causal) on every head of the study's
models, beside the knee and against the nulls (docs/method.md §9c, item (e)); each word against
its promise and the signals beside it, and a registration's verdicts when one is named
(docs/method.md §9f)."""

import eb_entry  # noqa: F401  first: the rule's log, then this clone's library

from entropic_bound.config.provenance import provenance
from entropic_bound.core.io import write_table, write_text
from entropic_bound.core.runner import run
from entropic_bound.heads.promises import evaluate, promises, promises_markdown, separations
from entropic_bound.heads.study import STAMPED, cost_table, predict_markdown, predicted


def main(sm):
    study, reg = sm.params.study, sm.params.registration
    prov = provenance({k: study[k] for k in STAMPED}, rule="heads_study_predict")
    out = predicted(study, sm.params.run_dir)
    write_table(out["predict"], sm.output.predict, prov)
    write_table(out["estimators"], sm.output.estimators, prov)
    table = promises(out["predict"], reg["truth"] if reg else "knee_inputs_metric")
    sep = separations(table)
    verdicts = evaluate(table, reg) if reg else None
    write_table(table, sm.output.promises, prov)
    write_table(sep, sm.output.separation, prov)
    write_table(verdicts if reg else evaluate(table.iloc[:0], None), sm.output.verdicts, prov)
    md = predict_markdown(out["predict"], out["estimators"], cost_table(sm.params.benchmarks))
    md += "\n" + promises_markdown(table, sep, verdicts, reg)
    write_text(sm.output.md, md, prov)
    print(md)


run(main, snakemake)  # noqa: F821
