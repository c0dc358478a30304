# The report (`snakemake --report`): the tables' entries; the figures' inputs, outputs and
# entries. Included by common.smk; no rules here.
# The report sorts categories and subcategories by name: the numbers put the claims and the
# provenance first. Subcategories: by claim for figures, by stage for tables; labels carry both.
_CLAIMS_CAT = "1 Claims and provenance"
_EXPLORATORY = "4 Exploratory (no verdict)"
#: the tables' report entries (figures: their FigureSpec, workflow/rules/figures.smk)
_REPORT_ITEMS = {  # id: (category, subcategory, claims, stage)
    "T1": (_CLAIMS_CAT, "Verdicts C1-C9", "C1-C9", "claims"),
    "claims_md": (_CLAIMS_CAT, "Verdicts C1-C9", "C1-C9", "claims"),
    "controls": (_CLAIMS_CAT, "Controls", "C1-C9", "claims"),
    "provenance": (_CLAIMS_CAT, "Provenance", "C1-C9", "provenance"),
    "T2": ("3 Tables", "Training and prediction", "C4, C5, C6", "training"),
    "T3": ("3 Tables", "Estimators", "C8", "training"),
    "T4": ("3 Tables", "Frontier", "C9", "frontier"),
    "bounds": ("3 Tables", "Class bounds", "C1, C2, C6, C7 (v2)", "bounds"),
    "X1_table": (_EXPLORATORY, "Frontier boundaries", "C9", "frontier"),
    "X2_table": (_EXPLORATORY, "C8 where softmax distorts", "C8", "training"),
    "X3_table": (_EXPLORATORY, "The floor-aware rank", "C8, C9", "frontier"),
    "scale": (_EXPLORATORY, "Verdict by scale", "C1-C9", "scale"),
}
#: report() arguments of every report item: caption, category, subcategory, labels
REPORT = {
    key: dict(
        caption=f"../report/{key}.rst",
        category=category,
        subcategory=subcategory,
        labels={"item": key.replace("_md", ".md"), "claims": claims, "stage": stage},
    )
    for key, (category, subcategory, claims, stage) in _REPORT_ITEMS.items()
}


# --- figures: inputs, outputs and report entries from each FigureSpec (figures.smk) ---
from entropic_bound.figures.spec import (  # noqa: E402
    FIGURES,
    figure_tables,
    figures_of_rule,
    reference_file,
    table_file,
    tables_of_rule,
)


def figure_outputs(rule):
    """The PNG (in the report, under its spec's category and caption) and PDF of each figure
    whose FigureSpec (src/entropic_bound/figures/spec.py) names ``rule``."""
    out = {}
    for fid in figures_of_rule(rule):
        path = f"{RUN}/figures/{FIGURES[fid].stem}"
        out[f"{fid}_png"] = report(f"{path}.png", **figure_report(FIGURES[fid]))
        out[f"{fid}_pdf"] = f"{path}.pdf"
    return out


def reference_figure_inputs():
    """Every table a figure reads, from the shipped reference (REFERENCE), keyed by stem."""
    return {t: repo_path(f"{REFERENCE}/{reference_file(t)}") for t in figure_tables()}


def reference_figure_outputs():
    """The PNG and PDF of every figure, under REFERENCE_FIGURES (not in the report)."""
    return {
        f"{fid}_{ext}": f"{REFERENCE_FIGURES}/{f.stem}.{ext}"
        for fid, f in FIGURES.items()
        for ext in ("png", "pdf")
    }


def figure_report(spec):
    """report() arguments of a figure, from its FigureSpec."""
    return dict(
        # Snakemake reads a caption relative to the rule file (workflow/rules/), not the working
        # directory: the same form as the tables' captions (REPORT above), from any directory
        caption=os.path.relpath(EB_ROOT / spec.caption, EB_ROOT / "workflow" / "rules"),
        category=spec.category,
        subcategory=spec.subcategory,
        labels={"item": spec.fid, "claims": spec.claims, "stage": spec.stage},
    )


def figure_inputs(rule):
    """The cached tables the figures of ``rule`` read, keyed by table stem."""
    return {t: f"{TABLES}/{table_file(t)}" for t in tables_of_rule(rule)}
