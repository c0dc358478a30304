"""Stage ``bounds`` (workflow/rules/bounds.smk): the class bound R*_c(r) of every task (L0 exact,
the other classes by direct optimisation) and ε_task, which training and registration v2 of the
claims read (docs/method.md §5b); after training, stage ``best_bounds``: the best-known bound of
each (task, rank) by independent routes (bounds/best.py)."""

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
    "population_risk": "population",
    "population_bounds": "population",
    "rung_best_bounds": "best",
    "combine_routes": "best",
}
__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
