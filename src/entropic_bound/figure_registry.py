"""Every figure the pipeline publishes, defined once: its file stem, the cached tables it reads
and the rule that draws it. ``workflow/rules/analysis.smk`` builds the plotting rules' inputs and
outputs from this registry, and ``plotting.make_figure`` draws from it, so a figure is added
here and in its drawing function, nowhere else. No plotting imports: Snakemake reads this when
it builds the DAG.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FigureSpec:
    stem: str  # file stem under figures/ (PNG and PDF)
    tables: tuple[str, ...]  # stems of the cached tables it reads (under tables/)
    rule: str  # the plotting rule that draws it
    about: str  # what it shows, one line (the rule file's comment, the report's category)


FIGURES: dict[str, FigureSpec] = {
    "F1": FigureSpec(
        "F1_deficiency",
        ("risk_curves", "T2_intrinsic_ranks"),
        "plot_figures",
        "deficiency and achievability: R against rank with the tail-energy overlay",
    ),
    "F2": FigureSpec(
        "F2_recovery",
        ("train_metrics", "rank_dynamics"),
        "plot_figures",
        "recovery: learned spectra of full-rank students and their rank over training",
    ),
    "F3": FigureSpec(
        "F3_naive_transfer",
        ("T2_intrinsic_ranks",),
        "plot_figures",
        "naive transfer: P_static against r* per rung and the static students' risk",
    ),
    "F4": FigureSpec(
        "F4_ladder",
        ("T2_intrinsic_ranks", "ladder"),
        "plot_figures",
        "the ladder L0 → L1 → L2 → Lλ → L4: where the static picture breaks",
    ),
    "F5": FigureSpec(
        "F5_estimators",
        ("T3_estimators", "X2_c8_by_beta"),
        "plot_figures",
        "estimator robustness: mean |error| per estimator, linear vs softmax, and by β",
    ),
    "F6": FigureSpec(
        "F6_frontier",
        ("T4_frontier",),
        "plot_frontier",
        "the data-only predictability frontier as exact-recovery heatmaps",
    ),
    "F7": FigureSpec(
        "F7_prediction_vs_knee",
        ("T2_intrinsic_ranks",),
        "plot_figures",
        "data-only predictions against the trained knee on every task",
    ),
    "X1": FigureSpec(
        "X1_boundaries",
        ("X1_boundaries",),
        "plot_frontier",
        "exploratory: noise tolerance σ50 by data budget and β, P_invert beside its linear twin",
    ),
}

#: table stem -> file name under tables/ (parquet for the training tables, CSV otherwise)
PARQUET_TABLES = ("train_metrics", "train_dynamics", "train_loss")


def table_file(stem: str) -> str:
    return f"{stem}.parquet" if stem in PARQUET_TABLES else f"{stem}.csv"


def figures_of_rule(rule: str) -> list[str]:
    """Figure ids drawn by ``rule``, in registry order."""
    return [k for k, f in FIGURES.items() if f.rule == rule]


def tables_of_rule(rule: str) -> list[str]:
    """The table stems the figures of ``rule`` read (each once, in registry order)."""
    return list(dict.fromkeys(t for k in figures_of_rule(rule) for t in FIGURES[k].tables))
