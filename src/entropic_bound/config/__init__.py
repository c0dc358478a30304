"""Configs: strict loading, JSON-Schema validation, cross-key checks, provenance stamps."""

from entropic_bound.core.lazy import lazy_exports

#: public name -> the module that defines it
_EXPORTS = {
    "REPO": "load",
    "ConfigError": "load",
    "load_schema": "load",
    "check_finite": "load",
    "validate": "load",
    "validate_config": "load",
    "SCALE_RUN_NAME": "relations",
    "RESERVED_RUN_NAMES": "relations",
    "check_relations": "relations",
    "check_claims_relations": "claims",
    "read_config": "load",
    "load_config": "load",
    "merged": "load",
    "load_run_config": "load",
    "check_workflow_config": "load",
    "check_claims_estimators": "claims",
    "scale_study_asked": "load",
    "load_scale_list": "load",
    "config_hash": "load",
    "class_optim": "load",
    "PAPER": "provenance",
    "PACKAGES": "provenance",
    "git_commit": "provenance",
    "package_versions": "provenance",
    "provenance": "provenance",
    "STAMP_KEYS": "provenance",
    "summarize_provenance": "provenance",
    "provenance_rst": "provenance",
}
__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
