"""Every figure the pipeline publishes, defined once (docs/method.md §6).

A :class:`FigureSpec` names everything about a figure: its file stem, the cached tables it
reads, the rule that draws it, the module whose ``draw(tables, claims)`` draws it, its place in
the Snakemake report and its caption file. ``workflow/rules/figures.smk`` builds the plotting
rules' inputs, outputs and report entries from :data:`FIGURES`; ``figures.draw.make_figure``
draws from it. No plotting imports here: Snakemake reads this module when it builds the DAG.
"""

from __future__ import annotations

from dataclasses import dataclass

#: report categories (the report sorts them by name: the numbers set the order)
FIGURES_CATEGORY = "2 Figures"
EXPLORATORY_CATEGORY = "4 Exploratory (no verdict)"


@dataclass(frozen=True)
class FigureSpec:
    fid: str  # F1 … F7, X1, X3
    stem: str  # file stem under figures/ (PNG and PDF)
    tables: tuple[str, ...]  # stems of the cached tables it reads (under tables/)
    rule: str  # the plotting rule that draws it (workflow/rules/figures.smk)
    module: str  # entropic_bound.figures.<module>.draw draws it
    about: str  # what it shows, one line
    claims: str  # the claims it illustrates (report label)
    stage: str  # the pipeline stage its data come from (report label)
    subcategory: str  # its report subcategory
    category: str = FIGURES_CATEGORY

    @property
    def caption(self) -> str:
        """The report caption (reStructuredText), relative to the repository root."""
        return f"workflow/report/{self.fid}.rst"


_SPECS = (
    FigureSpec(
        "F1",
        "F1_deficiency",
        ("risk_curves", "T2_intrinsic_ranks"),
        "plot_figures",
        "f1_deficiency",
        "deficiency and achievability: R against rank with the tail-energy overlay",
        "C1, C2",
        "training",
        "C1, C2: deficiency and achievability",
    ),
    FigureSpec(
        "F2",
        "F2_recovery",
        ("train_metrics", "rank_dynamics"),
        "plot_figures",
        "f2_recovery",
        "recovery: learned spectra of full-rank students and their rank over training",
        "C3, C7",
        "training",
        "C3, C7: recovery",
    ),
    FigureSpec(
        "F3",
        "F3_naive_transfer",
        ("T2_intrinsic_ranks",),
        "plot_figures",
        "f3_naive_transfer",
        "naive transfer: P_static against r* per rung and the static students' risk",
        "C5",
        "data-only prediction",
        "C5: naive transfer",
    ),
    FigureSpec(
        "F4",
        "F4_ladder",
        ("T2_intrinsic_ranks", "ladder"),
        "plot_figures",
        "f4_ladder",
        "the ladder L0 → L1 → L2 → Lλ → L4: where the static picture breaks",
        "C6",
        "training",
        "C6: the ladder",
    ),
    FigureSpec(
        "F5",
        "F5_estimators",
        ("T3_estimators", "X2_c8_by_beta"),
        "plot_figures",
        "f5_estimators",
        "estimator robustness: mean |error| per estimator, linear vs softmax, and by β",
        "C8",
        "training",
        "C8: estimators",
    ),
    FigureSpec(
        "F6",
        "F6_frontier",
        ("T4_frontier",),
        "plot_frontier",
        "f6_frontier",
        "the data-only predictability frontier as exact-recovery heatmaps",
        "C9",
        "frontier",
        "C9: the frontier",
    ),
    FigureSpec(
        "F7",
        "F7_prediction_vs_knee",
        ("T2_intrinsic_ranks",),
        "plot_figures",
        "f7_prediction_vs_knee",
        "data-only predictions against the trained knee on every task",
        "C4",
        "data-only prediction",
        "C4: prediction vs knee",
    ),
    FigureSpec(
        "X1",
        "X1_boundaries",
        ("X1_boundaries",),
        "plot_frontier",
        "x1_boundaries",
        "exploratory: noise tolerance σ50 by data budget and β, P_invert beside its linear twin",
        "C9",
        "frontier",
        "Frontier boundaries",
        EXPLORATORY_CATEGORY,
    ),
    FigureSpec(
        "X3",
        "X3_floor_aware",
        ("X3_floor_aware",),
        "plot_frontier",
        "x3_floor_aware",
        "exploratory: the floor-aware rank beside r_E(0.99), held-out frontier seeds and ladder",
        "C8, C9",
        "frontier",
        "The floor-aware rank",
        EXPLORATORY_CATEGORY,
    ),
)
#: figure id -> its spec, in publication order
FIGURES: dict[str, FigureSpec] = {s.fid: s for s in _SPECS}

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


def figure_tables() -> list[str]:
    """The table stems any figure reads (each once, in registry order): what a reference
    (benchmarks/reference/<run>/) must hold for every figure to be drawn from it alone."""
    return list(dict.fromkeys(t for f in FIGURES.values() for t in f.tables))


def reference_file(stem: str) -> str:
    """The file of table ``stem`` in a reference folder: a CSV table gzipped (what verify
    compares), a parquet table as is (benchmarks/make_reference.py)."""
    return table_file(stem) if stem in PARQUET_TABLES else f"{table_file(stem)}.gz"
