"""Rule `heads_study_predict`: entropic-bound predict (causal) on every head of the study's
models, beside the knee and against the nulls (docs/method.md §9c, item (e))."""

import eb_entry  # noqa: F401  first: the rule's log, then this clone's library

from entropic_bound.config.provenance import provenance
from entropic_bound.core.io import write_table, write_text
from entropic_bound.core.runner import run
from entropic_bound.heads.study import STAMPED, cost_table, predict_markdown, predicted


def main(sm):
    study = sm.params.study
    prov = provenance({k: study[k] for k in STAMPED}, rule="heads_study_predict")
    out = predicted(study, sm.params.run_dir)
    write_table(out["predict"], sm.output.predict, prov)
    write_table(out["estimators"], sm.output.estimators, prov)
    md = predict_markdown(out["predict"], out["estimators"], cost_table(sm.params.benchmarks))
    write_text(sm.output.md, md, prov)
    print(md)


run(main, snakemake)  # noqa: F821
