"""The product's command on real heads (docs/method.md §9c, item (e); rule ``heads_predict``):
``entropic-bound predict``'s recommendation (:func:`predict.recommend_rank`, what the command
prints) on each head's captured input X (after the block's LayerNorm, [B, n, d_model]) and
output Y (before the output projection, [B, n, d_head]: d_v ≠ d), with the causal mask
(``predict.causal``), beside the head's knee.

The config's ``predict`` section says which heads (``heads``: ``all``, ``none`` or a list of
[layer, head]) and on how many capture windows (``sequences``, the first of the capture set). One
row per head: its rank, predictor, estimator, confidence, regime and the CPU seconds it took,
and the signals a confidence word may rest on (docs/method.md §9f): the causal fit's spectrum
(JSON), its residual share and convergence, every start's residual and spectrum, and the same fit
on the even- and on the odd-numbered windows alone (split halves), and each half's kernel cut to
every rank read on the other half (the held-out truncation curve, their mean).
"""

from __future__ import annotations

import json
import time

import pandas as pd
import torch

from entropic_bound.core.io import write_table
from entropic_bound.heads.capture import capture_layer
from entropic_bound.heads.measure import check_corpus, held_out_sets
from entropic_bound.heads.stage import corpus_of, load_model

#: the table's columns (an empty table when no head is asked for)
COLUMNS = [
    "layer",
    "head",
    "predict_rank",
    "predict_predictor",
    "predict_estimator",
    "predict_confidence",
    "predict_regime",
    "predict_cpu_s",
    "predict_label",
    "predict_residual_share",
    "predict_noise_relative",
    "predict_converged",
    "predict_iterations",
    "predict_spectrum",
    "predict_starts",
    "predict_truncation",
    "predict_spectrum_even",
    "predict_spectrum_odd",
    "predict_held_out",
    "predict_halves_cpu_s",
]


def selected_heads(predict: dict, layers: int, heads: int) -> list[tuple[int, int]]:
    """The (layer, head) pairs of ``predict.heads``: ``all``, ``none`` or a list of pairs."""
    asked = predict["heads"]
    if asked == "all":
        return [(layer, h) for layer in range(layers) for h in range(heads)]
    if asked == "none":
        return []
    bad = [pair for pair in asked if not (0 <= pair[0] < layers and 0 <= pair[1] < heads)]
    if bad:
        raise ValueError(f"predict.heads names heads the model lacks: {bad}")
    return sorted((int(a), int(b)) for a, b in asked)


def predict_heads(cfg: dict, model_path, out_path, log=print, prov: dict | None = None):
    """The recommendation of every selected head (module docstring), written to ``out_path``."""
    torch.set_num_threads(cfg["threads"])
    p = cfg["predict"]
    model, facts = load_model(model_path)
    pairs = selected_heads(p, model.shape.layers, model.shape.heads)
    rows = []
    if pairs:
        corpus = corpus_of(cfg)
        check_corpus(corpus, facts)
        capture, _ = held_out_sets(cfg, corpus, model.shape.context)
        tokens = capture[: p["sequences"], :-1]
        for layer in sorted({layer for layer, _ in pairs}):
            seen = capture_layer(model, tokens, layer)
            for _, h in (pair for pair in pairs if pair[0] == layer):
                start = time.process_time()
                rec = _recommend(seen["x"], seen["y"][:, h], p)
                row = {
                    "layer": layer,
                    "head": h,
                    "predict_rank": float(rec.rank),
                    "predict_predictor": rec.predictor,
                    "predict_estimator": rec.estimator,
                    "predict_confidence": rec.confidence,
                    "predict_regime": rec.regime,
                    "predict_cpu_s": time.process_time() - start,
                }
                start = time.process_time()
                row.update(signals(rec, seen["x"], seen["y"][:, h], p["causal"]))
                row["predict_halves_cpu_s"] = time.process_time() - start
                rows.append(row)
                log(f"layer {layer} head {h}: {rows[-1]}")
    table = pd.DataFrame(rows, columns=COLUMNS)
    write_table(table, out_path, prov)
    return table


def signals(rec, X: torch.Tensor, Y: torch.Tensor, causal: bool) -> dict:
    """What a confidence word may rest on, read from ``predict``'s recommendation on one head,
    and the causal fit again on the even- and on the odd-numbered windows alone (same form,
    one start: the whole fit's kernel): a kernel's spectrum does not depend on which windows
    show it, a floor of estimation noise does."""
    report = rec.report
    entry = report["predictors"]["P_attn"]
    out = {
        "predict_label": report["frontier"]["mixing"].get("label"),
        "predict_noise_relative": report["frontier"]["noise"].get("relative"),
        "predict_spectrum": _json(entry.get("spectrum")),
    }
    if not causal or rec.fit is None:
        return out
    out.update(
        predict_residual_share=entry["residual_share"],
        predict_converged=bool(entry["converged"]),
        predict_iterations=int(entry["iterations"]),
        predict_starts=_json([[s["residual"], s["spectrum"]] for s in entry["starts"]]),
        predict_truncation=_json(entry["truncation_residuals"]),
        predict_spectrum_even=_json((entry.get("half_spectra") or [None, None])[0]),
        predict_spectrum_odd=_json((entry.get("half_spectra") or [None, None])[1]),
        predict_held_out=_json(entry.get("held_out_residuals")),
    )
    return out


def _json(values) -> str | None:
    """A list of floats (or nested lists) as JSON, each to 10 significant digits."""
    if values is None:
        return None

    def short(v):
        return [short(x) for x in v] if isinstance(v, list) else float(f"{v:.10g}")

    return json.dumps(short(list(values)))


def _recommend(X: torch.Tensor, Y: torch.Tensor, p: dict):
    from entropic_bound.predict import recommend_rank

    return recommend_rank(X.double().numpy(), Y.double().numpy(), causal=p["causal"])
