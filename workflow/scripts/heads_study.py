"""Rule `heads_study_verdicts`: the registered heads study decided (docs/method.md §9b, §9c):
every model's heads, the verdict table, the estimators against the nulls, the anchor's
comparison, the cost."""

import eb_entry  # noqa: F401  first: the rule's log, then this clone's library

from entropic_bound.config.provenance import provenance
from entropic_bound.core.io import write_table, write_text
from entropic_bound.core.runner import run
from entropic_bound.heads.study import STAMPED, cost_table, decide, study_markdown


def main(sm):
    study = sm.params.study
    prov = provenance({k: study[k] for k in STAMPED}, rule="heads_study_verdicts")
    out = decide(study, sm.params.run_dir)
    cost = cost_table(sm.params.benchmarks)
    for name in ("verdicts", "heads", "estimators", "anchor"):
        write_table(out[name], getattr(sm.output, name), prov)
    write_table(cost, sm.output.cost, prov)
    md = study_markdown(
        study, out["verdicts"], out["estimators"], out["anchor"], cost, out["within_layers"]
    )
    write_text(sm.output.md, md, prov)
    print(md)


run(main, snakemake)  # noqa: F821
