"""Every head of a capture (:mod:`.write`) measured as registration H3 fixes it (docs/method.md
§9e): the functional knee under both truncations (:mod:`.knee`) with its halves, the share of
the head's output its attention pattern moves, the spectra's estimators and ``predict``'s answer.

One row per head (:data:`COLUMNS`) and one curve row per head, truncation and rank. The
estimators, each an r_E of a spectrum:

* ``kernel_0.9``, ``kernel_0.99``: svd(W_Qᵀ W_K), biases left out (the anchor's; for a rotary
  head the planes' products at offset 0, which the rotation leaves alone);
* ``field_0.9``: per window, r_E(0.9) of the singular values of the head's pre-softmax logits
  (scale, biases and position terms included) with each row centred over the keys its query
  sees; the median over windows;
* ``pattn_0.9``, ``pattn_floor``: ``predict``'s P_attn on the head's (X, Y), data only: r_E(0.9)
  and the floor-aware rank of the spectrum it reports;
* ``predict_rank``, ``predict_word``: ``entropic-bound predict``'s recommendation and confidence
  on (X, Y), ``--causal`` for a causal model, defaults otherwise; a refusal (whatever the
  command would answer with one line on stderr and exit 2: too little memory, tokens it cannot
  invert) is recorded as ``refused`` with that line, not an answer.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from entropic_bound.core.estimators import energy_rank
from entropic_bound.heads.knees import KNEE_FRACTION
from entropic_bound.heads.ranks import row_centred_logits
from entropic_bound.pretrained.knee import (
    METRICS,
    Head,
    columns,
    error_curve,
    knee_of,
    relative_error,
)

#: the per-head table's columns
COLUMNS = [
    "model",
    "layer",
    "head",
    "d_head",
    "d_model",
    "rotary",
    "causal",
    "tolerance",
    "ablation_share",
    "y_recompute_rel",
    *(f"knee_{m}{part}" for m in METRICS for part in ("", "_a", "_b")),
    "kernel_0.9",
    "kernel_0.99",
    "field_0.9",
    "pattn_0.9",
    "pattn_floor",
    "predict_rank",
    "predict_word",
    "predict_predictor",
    "predict_estimator",
    "predict_note",
    "predict_cpu_s",
    "measure_cpu_s",
]
#: the word of a head ``predict`` refused (one line of why in ``predict_note``)
REFUSED = "refused"


def heads_of(z, causal: bool):
    """The heads of one layer file's members ``z`` (:mod:`.write`), as :class:`.knee.Head`."""
    X = torch.from_numpy(np.asarray(z["X"]))
    Y = torch.from_numpy(np.asarray(z["Y"]))
    get = {k: torch.from_numpy(np.asarray(z[k])) for k in z if k.startswith(("w_", "b_"))}
    rope = None
    if "rope_cos" in z:
        rope = (torch.from_numpy(z["rope_cos"]), torch.from_numpy(z["rope_sin"]))
    bias = torch.from_numpy(z["position_bias"]) if "position_bias" in z else None
    for h in range(Y.shape[1]):
        yield Head(
            X,
            Y[:, h],
            get["w_q"][h],
            get["w_k"][h],
            get["w_v"][h],
            get["b_q"][h] if "b_q" in get else None,
            get["b_k"][h] if "b_k" in get else None,
            get["b_v"][h] if "b_v" in get else None,
            float(z["scale"]),
            bias=None if bias is None else bias[h],
            causal=causal,
            rope=rope,
        )


def kernel_singular_values(head: Head) -> np.ndarray:
    """svd(W_Qᵀ W_K) [dh] (its other singular values are 0), from a QR of each side."""
    _, Ra = torch.linalg.qr(head.w_q.double().T)
    _, Rb = torch.linalg.qr(head.w_k.double().T)
    return torch.linalg.svdvals(Ra @ Rb.T).numpy()


def field_rank(head: Head, tau: float = 0.9) -> float:
    """The median over windows of r_E(τ) of the row-centred logit field (module docstring)."""
    Qc, Kc = columns(head, "plain")
    logits = head.scale * (Qc @ Kc.transpose(1, 2))
    if head.bias is not None:
        logits = logits + head.bias.double()
    centred = row_centred_logits(logits, head.causal)
    return float(np.median(energy_rank(torch.linalg.svdvals(centred).numpy(), tau)))


def predicted(head: Head) -> dict:
    """``predict``'s recommendation on the head's (X, Y) (module docstring)."""
    from entropic_bound.predict import recommend_rank

    start = time.process_time()
    row = {"pattn_0.9": np.nan, "pattn_floor": np.nan, "predict_rank": np.nan}
    try:
        rec = recommend_rank(head.X.double().numpy(), head.Y.double().numpy(), causal=head.causal)
    except Exception as exc:  # noqa: BLE001 - what the command answers with one line and exit 2
        row |= {"predict_word": REFUSED, "predict_predictor": "", "predict_estimator": ""}
        row |= {"predict_note": " ".join(str(exc).split()) or type(exc).__name__}
    else:
        est = rec.report.get("predictors", {}).get("P_attn", {}).get("estimates") or {}
        row |= {
            "pattn_0.9": float(est.get("energy_0.9", np.nan)),
            "pattn_floor": float(est.get("floor", np.nan)),
            "predict_rank": float(rec.rank),
            "predict_word": rec.confidence,
            "predict_predictor": rec.predictor,
            "predict_estimator": rec.estimator,
            "predict_note": "",
        }
    return row | {"predict_cpu_s": time.process_time() - start}


def measure_head(head: Head, tolerance: float = KNEE_FRACTION, predict: bool = True):
    """(row, curve rows) of one head (module docstring); the halves are the first and the
    second half of the windows."""
    start = time.process_time()
    K = head.Y.shape[0]
    halves = (np.arange(K // 2), np.arange(K // 2, K))
    row = {"d_head": head.d_head, "d_model": head.X.shape[-1], "rotary": head.rope is not None}
    row["causal"], row["tolerance"] = head.causal, tolerance
    Y = head.Y.double()
    spread = float(((Y - Y.reshape(-1, Y.shape[-1]).mean(0)) ** 2).sum())
    curves = []
    for metric in METRICS:
        ranks, err = error_curve(head, metric)
        e = relative_error(err)
        parts = [relative_error(err, w) for w in halves]
        row[f"knee_{metric}"] = knee_of(ranks, e, tolerance)
        for tag, part in zip(("_a", "_b"), parts, strict=True):
            row[f"knee_{metric}{tag}"] = knee_of(ranks, part, tolerance)
        curves += [
            {"metric": metric, "r": int(r), "e": e[i], "e_a": parts[0][i], "e_b": parts[1][i]}
            for i, r in enumerate(ranks)
        ]
        row["ablation_share"] = float(err[0].sum()) / spread if spread > 0 else np.nan
        row["y_recompute_rel"] = float(np.sqrt(err[-1].sum() / float((Y**2).sum())))
    s = kernel_singular_values(head)
    row["kernel_0.9"], row["kernel_0.99"] = (float(energy_rank(s, t)) for t in (0.9, 0.99))
    row["field_0.9"] = field_rank(head)
    row["measure_cpu_s"] = time.process_time() - start
    if predict:
        row |= predicted(head)
    return row, curves


def measure_capture(capture, model: str, tolerance: float = KNEE_FRACTION, log=print):
    """(heads table, curves table) of every head of the capture folder ``capture``."""
    capture = Path(capture)
    manifest = json.loads((capture / "manifest.json").read_text())
    causal = bool(manifest["model"]["causal"])
    rows, curves = [], []
    for layer in manifest["layers"]:
        with np.load(capture / f"layer_{layer}.npz") as f:
            z = {k: f[k] for k in f.files}
        for h, head in enumerate(heads_of(z, causal)):
            row, curve = measure_head(head, tolerance)
            rows.append({"model": model, "layer": layer, "head": h} | row)
            curves += [{"model": model, "layer": layer, "head": h} | c for c in curve]
            log(  # progress only: no measured value is printed before the table is written
                f"{model} layer {layer} head {h}: {row['measure_cpu_s']:.1f} + "
                f"{row.get('predict_cpu_s', 0.0):.1f} CPU-s"
            )
    return pd.DataFrame(rows, columns=COLUMNS), pd.DataFrame(curves)
