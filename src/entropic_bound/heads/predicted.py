"""The product's command on real heads (docs/method.md §9c, item (e); rule ``heads_predict``):
``entropic-bound predict``'s recommendation (:func:`predict.recommend_rank`, what the command
prints) on each head's captured input X (after the block's LayerNorm, [B, n, d_model]) and
output Y (before the output projection, [B, n, d_head]: d_v ≠ d), with the causal mask
(``predict.causal``), beside the head's knee.

The config's ``predict`` section says which heads (``heads``: ``all``, ``none`` or a list of
[layer, head]) and on how many capture windows (``sequences``, the first of the capture set). One
row per head: its rank, predictor, estimator, confidence, regime and the CPU seconds it took.
"""

from __future__ import annotations

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
                rows.append(
                    {
                        "layer": layer,
                        "head": h,
                        "predict_rank": float(rec.rank),
                        "predict_predictor": rec.predictor,
                        "predict_estimator": rec.estimator,
                        "predict_confidence": rec.confidence,
                        "predict_regime": rec.regime,
                        "predict_cpu_s": time.process_time() - start,
                    }
                )
                log(f"layer {layer} head {h}: {rows[-1]}")
    table = pd.DataFrame(rows, columns=COLUMNS)
    write_table(table, out_path, prov)
    return table


def _recommend(X: torch.Tensor, Y: torch.Tensor, p: dict):
    from entropic_bound.predict import recommend_rank

    return recommend_rank(X.double().numpy(), Y.double().numpy(), causal=p["causal"])
