"""The ``entropic-bound`` command (``predict``, ``inspect``, ``verify``): it reads files, calls
the library and prints. The recommendation itself is library code: :mod:`entropic_bound.predict`
(``recommend_rank``); its names are re-exported here for the 0.1 imports."""

from entropic_bound.core.lazy import lazy_exports

#: public name -> the module that defines it (``..``: a sibling package)
_EXPORTS = {
    "Thresholds": "..predict.recommend",
    "THRESHOLDS": "..predict.recommend",
    "TASK_META_KEYS": "..predict.recommend",
    "Recommendation": "..predict.recommend",
    "check_estimator": "..predict.recommend",
    "validate_shapes": "..predict.shapes",
    "recommend_source": "..predict.recommend",
    "choose_predictor": "..predict.recommend",
    "recommend_rank": "..predict.recommend",
}
__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
