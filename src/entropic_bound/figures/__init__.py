"""Stage ``figures`` (workflow/rules/figures.smk): F1-F7 and X1 from cached tables.

One module per figure (its ``draw``), one :class:`~entropic_bound.figures.spec.FigureSpec` per
figure in spec.py (inputs, rule, drawing module, report category, caption), the house style in
style.py, writing in draw.py.
"""

from entropic_bound.core.lazy import lazy_exports

#: public name -> the module that defines it
_EXPORTS = {
    "FIGURES": "spec",
    "FigureSpec": "spec",
    "make_figure": "draw",
    "save_figure": "draw",
    "RC": "style",
    "RISK_FLOOR": "style",
    "r_star_palette": "style",
    "rung_label": "style",
    "rung_palette": "style",
    "rung_title": "style",
    "figure_F1": "f1_deficiency",
    "figure_F2": "f2_recovery",
    "figure_F3": "f3_naive_transfer",
    "figure_F4": "f4_ladder",
    "figure_F5": "f5_estimators",
    "figure_F6": "f6_frontier",
    "figure_F7": "f7_prediction_vs_knee",
    "figure_X1": "x1_boundaries",
}
__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
