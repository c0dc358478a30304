"""Stage ``bounds`` (workflow/rules/bounds.smk): the class bound R*_c(r) of every task (L0 exact,
the other classes by direct optimisation) and ε_task, which training and registration v2 of the
claims read (docs/method.md §5b)."""

from entropic_bound.core.lazy import lazy_exports

#: public name -> the module that defines it
_EXPORTS = {
    "BoundSettings": "optimise",
    "optimised_bounds": "optimise",
    "tail_energy": "stage",
    "bound_ranks": "stage",
    "epsilon_task": "stage",
    "rung_bounds": "stage",
    "task_epsilons": "stage",
}
__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
