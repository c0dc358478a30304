"""How many rows the causal P_attn fit needs (docs/method.md §3, "Causal attention"): one count,
read by the fit (predict/causal.py) and by the heads configs' checks before any job runs."""

from __future__ import annotations


def rows_needed(d: int, dv: int) -> int:
    """The fewest rows (B·n) that determine the fit: more equations (rows·d_v) than its
    d² + 2·d·d_v unknowns, and more rows than the 2·d unknowns of each output column's least
    squares (W and the prefix-mean term, given A)."""
    return max((d * d + 2 * d * dv) // dv, 2 * d) + 1
