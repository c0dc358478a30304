# Input and output functions of the plotting rules, built from the figure registry
# (src/entropic_bound/figure_registry.py): a figure's stem and tables are defined there only.
from entropic_bound.figure_registry import (  # noqa: E402
    FIGURES,
    figures_of_rule,
    table_file,
    tables_of_rule,
)


def figure_outputs(rule):
    """The PNG (in the report, captioned by workflow/report/<id>.rst) and PDF of each figure
    the registry (src/entropic_bound/figure_registry.py) assigns to ``rule``."""
    out = {}
    for fid in figures_of_rule(rule):
        path = f"{RUN}/figures/{FIGURES[fid].stem}"
        out[f"{fid}_png"] = report(f"{path}.png", **REPORT[fid])
        out[f"{fid}_pdf"] = f"{path}.pdf"
    return out


def figure_inputs(rule):
    """The cached tables the figures of ``rule`` read, keyed by table stem."""
    return {t: f"{TABLES}/{table_file(t)}" for t in tables_of_rule(rule)}
