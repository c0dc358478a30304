"""Stage ``heads`` (workflow/rules/heads.smk; docs/method.md §9), exploratory: a small causal
transformer trained on the Python standard library's sources, and for every head its
truncation knee beside the ranks of its learned kernel, its logit field and P_attn.
"""

from entropic_bound.core.lazy import lazy_exports

#: public name -> the module that defines it
_EXPORTS = {
    "Corpus": "corpus",
    "load_corpus": "corpus",
    "stdlib_root": "corpus",
    "windows": "corpus",
    "ModelShape": "model",
    "TinyGPT": "model",
    "head_weights": "model",
    "qk_kernel": "model",
    "train_model": "train",
    "capture_layer": "capture",
    "kernel_spectrum": "ranks",
    "logit_field_spectra": "ranks",
    "row_centred_logits": "ranks",
    "pattn_spectrum": "ranks",
    "head_ranks": "ranks",
    "KNEE_FRACTION": "knees",
    "KneeProbe": "knees",
    "knee_of": "knees",
    "truncated_factors": "knees",
    "agreement": "report",
    "reliability": "reliability",
    "head_reliability": "reliability",
    "null_guesses": "baselines",
    "paired": "baselines",
    "evaluate": "claims",
    "eligible": "claims",
    "verdict_markdown": "claims",
    "shingles": "dedup",
    "containment": "dedup",
    "summary_markdown": "report",
    "figure_knees": "figure",
    "figure_curve": "figure",
    "train_heads": "stage",
    "model_facts": "stage",
    "held_out_sets": "measure",
    "measure_heads": "measure",
}
__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
