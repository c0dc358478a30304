"""Stage ``exploratory`` (workflow/rules/exploratory.smk): analyses that were not
pre-registered; reported, labelled exploratory, never a verdict.
"""

from entropic_bound.core.lazy import lazy_exports

#: public name -> the module that defines it
_EXPORTS = {
    "tasks_at_beta": "c8_by_beta",
    "train_full_rank_by_beta": "c8_by_beta",
    "estimators_by_beta": "c8_by_beta",
    "boundary_lines": "beyond",
    "c8_beta_lines": "beyond",
    "beyond_the_verdicts": "beyond",
    "HEADLINE_TABLES": "scale",
    "Headline": "scale",
    "read_run_tables": "scale",
    "scale_rows": "scale",
    "verdict_by_scale": "scale",
    "scale_markdown": "scale",
    "figure_scale": "scale",
    "floor_aware_table": "floor_aware",
    "floor_aware_decision": "floor_aware",
}
__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
