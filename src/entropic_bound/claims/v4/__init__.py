"""Registration v4 (docs/method.md §5d): the abstract's sentences as sub-claims, declared as
data in config/claims.yaml over shared primitives (:mod:`.primitives`) and per-claim data
selectors (:mod:`.selectors`), evaluated by :mod:`.registration`."""

from entropic_bound.claims.v4.registration import (
    SUB_COLUMNS,
    VALIDATED,
    ClaimV4,
    build_claims,
    subclaim_table,
)

__all__ = ["SUB_COLUMNS", "VALIDATED", "ClaimV4", "build_claims", "subclaim_table"]
