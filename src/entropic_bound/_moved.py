"""The flat module paths of version 0.1, kept importable after the move into subpackages.

``import entropic_bound.engine`` gives the module ``entropic_bound.train.engine`` itself (not a
copy), so old imports, attribute access and monkeypatching all keep working.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys

#: 0.1 module name -> where it lives now (under entropic_bound.)
MOVED = {
    "seeds": "core.seeds",
    "rungs": "core.rungs",
    "estimators": "core.estimators",
    "io": "core.io",
    "progress": "core.progress",
    "runner": "core.runner",
    "strict_yaml": "config.strict_yaml",
    "taskgrid": "tasks.grid",
    "mixing": "tasks.mixing",
    "predictor_base": "predict.base",
    "static_predictor": "predict.static",
    "predictors": "predict",
    "boundaries": "frontier.boundaries",
    "engine": "train.engine",
    "backends": "train.backends",
    "fused": "train.fused",
    "layout": "train.layout",
    "schedule": "train.schedule",
    "search": "train.search",
    "analysis_common": "analysis.columns",
    "analysis_students": "analysis.students",
    "analysis_tables": "analysis.tables",
    "plotting": "figures",
    "plot_style": "figures.style",
    "figure_registry": "figures.spec",
    "softmax_distortion": "exploratory.c8_by_beta",
    "beyond": "exploratory.beyond",
    "scale": "exploratory.scale",
    "recommend": "predict.recommend",
    "scan": "predict.scan",
    "npyio": "cli.npyio",
    "datafiles": "cli.datafiles",
    "placement": "predict.placement",
    "why": "predict.why",
    "textreport": "cli.text",
    # 0.2: the recommendation moved from the command line's package into the library
    "cli.recommend": "predict.recommend",
    "cli.scan": "predict.scan",
    "cli.placement": "predict.placement",
    "cli.why": "predict.why",
    "cli.entries": "predict.entries",
    "cli.shapes": "predict.shapes",
}
_PREFIX = "entropic_bound."


class _MovedFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path=None, target=None):
        if name.startswith(_PREFIX) and name[len(_PREFIX) :] in MOVED:
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec):
        return None  # the default module, replaced by the real one in exec_module

    def exec_module(self, module):
        real = importlib.import_module(_PREFIX + MOVED[module.__name__[len(_PREFIX) :]])
        sys.modules[module.__name__] = real  # the import system returns what sys.modules holds


def install() -> None:
    if not any(isinstance(f, _MovedFinder) for f in sys.meta_path):
        sys.meta_path.append(_MovedFinder())
