"""Measure every head of the trained model (docs/method.md §9 (a)–(d); rule ``heads_measure``).

The held-out text is cut into two fixed, disjoint sets of windows: the capture set (the
spectra (b), (c)) and the knee set (every loss of the knee rule, :mod:`.knees`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from entropic_bound.core.io import write_table
from entropic_bound.heads.capture import capture_layer
from entropic_bound.heads.corpus import windows
from entropic_bound.heads.knees import KneeProbe, knee_of
from entropic_bound.heads.model import qk_kernel
from entropic_bound.heads.ranks import (
    head_ranks,
    kernel_spectrum,
    logit_field_spectra,
    pattn_spectrum,
)
from entropic_bound.heads.stage import corpus_of, load_model, resolve_device


def held_out_sets(cfg: dict, corpus, context: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Disjoint fixed held-out windows: (capture set [Nc, n+1], knee set [Nk, n+1]),
    interleaved over the validation text so that both span all of it."""
    m = cfg["measure"]
    nc, nk = m["capture_sequences"], m["knee_sequences"]
    both = torch.as_tensor(windows(corpus.valid, nc + nk, context))
    knee_rows = np.round(np.linspace(0, nc + nk - 1, nk)).astype(int)
    capture_rows = np.setdiff1d(np.arange(nc + nk), knee_rows)
    return both[capture_rows], both[knee_rows]


def _layer_rows(cfg, model, layer, capture, probe, full, log):
    """The table rows and knee curves of every head of ``layer``."""
    m, shape = cfg["measure"], model.shape
    seen = capture_layer(model, capture[:, :-1].to(probe.inputs.device), layer)
    rows, curves = [], []
    for h in range(shape.heads):
        ranks = head_ranks(
            kernel_spectrum(qk_kernel(model, layer, h).cpu()),
            logit_field_spectra(seen["logits"][:, h]),
            pattn_spectrum(seen["x"], seen["y"][:, h], m["pinv_rtol"]),
            m["taus"],
        )
        ablated = probe.ablated(layer, h)
        losses = probe.truncation_curve(layer, h, full)
        knee = knee_of(losses, full, ablated, m["knee_fraction"])
        rows.append(
            {"layer": layer, "head": h, "knee": knee, "d_head": shape.d_head}
            | {"loss_full": full, "loss_ablated": ablated, "gap": ablated - full}
            | ranks
        )
        curves += [
            {"layer": layer, "head": h, "r": r, "loss": float(v), "delta": float(v) - full}
            for r, v in enumerate(losses)
        ]
        log(f"layer {layer} head {h}: gap {ablated - full:.4f}, knee {knee}, {ranks}")
    return rows, curves


def measure_heads(
    cfg: dict, model_path, table_path, curves_path, log=print, prov: dict | None = None
) -> pd.DataFrame:
    """Every head's knee and ranks (docs/method.md §9 (a)–(d)): the per-head table
    (``table_path``) and every truncation curve L(r) (``curves_path``), stamped ``prov``."""
    torch.set_num_threads(cfg["threads"])
    device = resolve_device(cfg["device"])
    model, facts = load_model(model_path)
    model = model.to(device)
    corpus = corpus_of(cfg)
    if corpus.sha256 != facts["corpus"]["sha256"]:
        raise ValueError(
            f"the corpus under {corpus.root} is not the one the model was trained on "
            "(another Python's standard library?); retrain: delete the model file"
        )
    capture, knee_set = held_out_sets(cfg, corpus, model.shape.context)
    probe = KneeProbe(model, knee_set.to(device))
    rows, curves = [], []
    for layer in range(model.shape.layers):
        full = probe.loss(layer)  # the same floats at every layer, up to the batch order
        layer_rows, layer_curves = _layer_rows(cfg, model, layer, capture, probe, full, log)
        rows += layer_rows
        curves += layer_curves
    table = pd.DataFrame(rows)
    write_table(table, table_path, prov)
    write_table(pd.DataFrame(curves), curves_path, prov)
    return table
