"""The ``entropic-bound`` command (``predict``, ``inspect``, ``verify``) and its backend."""

from entropic_bound.core.lazy import lazy_exports

#: public name -> the module that defines it
_EXPORTS = {
    "Thresholds": "recommend",
    "THRESHOLDS": "recommend",
    "TASK_META_KEYS": "recommend",
    "Recommendation": "recommend",
    "check_estimator": "recommend",
    "validate_shapes": "recommend",
    "recommend_source": "recommend",
    "choose_predictor": "recommend",
    "recommend_rank": "recommend",
}
__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
