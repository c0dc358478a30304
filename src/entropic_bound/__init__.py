"""entropic-bound."""
