"""Stage ``predict`` (workflow/rules/predict.smk): data-only rank predictors, no training
(P_static, P_attn, P_invert, and P_attn under a causal mask; docs/method.md §3), and the
recommendation built on them for a user's own data (``recommend_rank``: every predictor under
every estimator, where the data sit on the frontier, the trusted predictor, its confidence and
why; ``entropic-bound predict`` prints it).
"""

from entropic_bound.core.lazy import lazy_exports

#: public name -> the module that defines it
_EXPORTS = {
    "DEFAULT_CLIP": "base",
    "centering": "base",
    "log_inversion_spectrum": "base",
    "STATIC_DENSE_MAX_ND": "static",
    "TOP_PAIR_TOL": "static",
    "TOP_PAIR_MAX_ITER": "static",
    "TopPairNotConverged": "static",
    "top_singular_pair": "static",
    "StaticLeastSquares": "static",
    "static_operator": "static",
    "rearranged_summary": "static",
    "predict_static": "static",
    "SingularTokens": "attention",
    "CENTRING_MATMUL_MAX": "attention",
    "attention_native_tokens": "attention",
    "attention_native_pinv": "attention",
    "attention_native_sum": "attention",
    "attention_native_eig": "attention",
    "attention_native_gram": "attention",
    "attention_native_spectrum": "attention",
    "AttnAccumulator": "attention",
    "predict_attention_native": "attention",
    "inversion_normal_matrix": "inversion",
    "token_pinv_exact": "inversion",
    "inversion_kernel": "inversion",
    "operator_to_kernel": "inversion",
    "inversion_spectrum": "inversion",
    "predict_inversion": "inversion",
    "CausalFit": "causal",
    "prefix_apply": "causal",
    "fit_causal": "causal",
    "attention_native_pinv_of": "stage",
    "attention_native_spectrum_of": "stage",
    "data_only_predictions": "stage",
    "data_only_spectra": "stage",
    "predictions_of": "tables",
    "merged_spectra": "tables",
    "recommend_rank": "recommend",
    "recommend_source": "recommend",
    "Recommendation": "recommend",
    "Thresholds": "recommend",
    "THRESHOLDS": "recommend",
    "choose_predictor": "recommend",
    "check_estimator": "recommend",
    "Settings": "scan",
    "InputError": "sources",
    "ArraySource": "sources",
    "validate_shapes": "shapes",
}
__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
