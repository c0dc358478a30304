"""Stage ``train`` (workflow/rules/train.smk): every student of a class in one batched program."""

from entropic_bound.core.lazy import lazy_exports

#: public name -> the module that defines it
_EXPORTS = {
    "Optim": "engine",
    "pick_device": "engine",
    "BACKENDS": "engine",
    "pick_backend": "engine",
    "tail_energy": "tables",
    "Active": "engine",
    "initial_state": "engine",
    "Record": "engine",
    "flush_denormal_is_on": "engine",
    "train_students": "engine",
    "DATA_ARRAYS": "search",
    "DATA_META": "search",
    "RANK_MODES": "search",
    "Knee": "search",
    "coarse_ranks": "search",
    "bisect_knees": "search",
    "blind_task": "search",
    "with_teacher": "search",
    "train_by_search": "search",
    "load_tasks": "stage",
    "train_chunk": "stage",
}
__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
