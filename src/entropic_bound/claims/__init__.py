"""Stage ``claims`` (workflow/rules/claims.smk): the verdict of each claim C1-C9, computed from
cached tables with the thresholds of config/claims.yaml (docs/method.md §5).

One module per claim (c1.py … c9.py: statement, test, checks), their order in registry.py,
the shared checks in checks.py, what a verdict is in verdict.py, claims.md in report.py.
"""

from entropic_bound.core.lazy import lazy_exports

#: public name -> the module that defines it
_EXPORTS = {
    "CLAIMS": "registry",
    "STATEMENTS": "registry",
    "NEEDS": "registry",
    "evaluate_claims": "registry",
    "load_tables": "registry",
    "REPRODUCED": "verdict",
    "NOT_REPRODUCED": "verdict",
    "MISSING": "verdict",
    "COLUMNS": "verdict",
    "TABLE_FILES": "verdict",
    "Check": "verdict",
    "Claim": "verdict",
    "claim": "verdict",
    "claims_markdown": "report",
    "claims_text": "report",
    "claims_after_failure": "stage",
    **{f"claim_c{i}": f"c{i}" for i in range(1, 10)},
}
__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
