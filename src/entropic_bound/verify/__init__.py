"""Check a run against the shipped reference within measured per-column tolerances
(``entropic-bound verify``, ``make verify``; docs/reproducibility.md).

The sha256 file (``benchmarks/paper_tables.sha256``) answers "is this the same computation on
the same kind of machine, bit for bit?"; this package answers "does a run on another CPU agree
with the published one to within what CPUs are measured to change?".
"""

from entropic_bound.core.lazy import lazy_exports

#: public name -> the module that defines it
_EXPORTS = {
    **dict.fromkeys(
        [
            "TableResult",
            "agrees",
            "compare_frames",
            "read_table_file",
            "reference_tables",
            "run_tables",
            "verify_run",
        ],
        "compare",
    ),
    **dict.fromkeys(
        ["Tolerance", "Tolerances", "VerifyInputError", "load_tolerances", "parse_tolerances"],
        "tolerance",
    ),
    **dict.fromkeys(["format_report", "report_json", "run_verify"], "report"),
    "default_reference": "locate",
}
__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
