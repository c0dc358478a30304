"""Stage ``frontier`` (workflow/rules/frontier.smk): the data-only predictability frontier and
its noise boundaries.
"""

from entropic_bound.core.lazy import lazy_exports

#: public name -> the module that defines it
_EXPORTS = {
    "P_ATTN_SIGMA": "grid",
    "frontier_inputs": "grid",
    "frontier_kernel": "grid",
    "qk_logits": "grid",
    "qk_operator": "grid",
    "frontier_grid": "grid",
    "log_grid": "boundaries",
    "noise_tolerance": "boundaries",
    "Curve": "boundaries",
    "boundaries_table": "boundaries",
    "boundaries_tables": "boundaries",
    "teacher_rows": "teachers",
}
__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
