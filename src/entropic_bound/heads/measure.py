"""Measure every head of the trained model (docs/method.md §9 (a)–(d); rule ``heads_measure``).

The held-out text is cut into two fixed, disjoint sets of windows: the capture set (the
spectra (b), (c)) and the knee set (every loss of the knee rule, :mod:`.knees`, kept per
window: the ``knee_windows`` table, from which :mod:`.reliability` reads the knee's
reliability).
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
from entropic_bound.predict.datascale import second_moment

#: the corpus digests a measurement checks against the model's (the text it was trained and
#: validated on)
CORPUS_DIGESTS = ("sha256", "train_sha256", "valid_sha256")


def held_out_sets(cfg: dict, corpus, context: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Disjoint fixed held-out windows: (capture set [Nc, n+1], knee set [Nk, n+1]),
    interleaved over the validation text so that both span all of it."""
    m = cfg["measure"]
    nc, nk = m["capture_sequences"], m["knee_sequences"]
    both = torch.as_tensor(windows(corpus.valid, nc + nk, context))
    knee_rows = np.round(np.linspace(0, nc + nk - 1, nk)).astype(int)
    capture_rows = np.setdiff1d(np.arange(nc + nk), knee_rows)
    return both[capture_rows], both[knee_rows]


def floor_settings(measure: dict) -> dict:
    """The floor test's settings of a config's ``measure`` section (:func:`.ranks.floor_of`)."""
    return {"quantile": measure["floor_quantile"], "flatness": measure["floor_flatness"]}


def _window_rows(layer: int, head: int, losses: np.ndarray, ablated: np.ndarray) -> pd.DataFrame:
    """The per-window losses of one head: layer, head, window, loss_r0 … loss_r<d_head>
    (the last the full model's), loss_ablated."""
    table = pd.DataFrame({f"loss_r{r}": v for r, v in enumerate(losses)})
    table.insert(0, "window", np.arange(losses.shape[1]))
    table.insert(0, "head", head)
    table.insert(0, "layer", layer)
    table["loss_ablated"] = ablated
    return table


def _layer_rows(cfg, model, layer, heads, capture, probe, full, log):
    """The table rows, knee curves and per-window losses of the heads ``heads`` of ``layer``."""
    m, shape = cfg["measure"], model.shape
    seen = capture_layer(model, capture[:, :-1].to(probe.inputs.device), layer)
    rows, curves, per_window = [], [], []
    mean_full = float(full.mean())
    gram = second_moment(seen["x"])  # the inputs' metric E[x xᵀ] (the capture windows)
    for h in heads:
        ranks = head_ranks(
            kernel_spectrum(qk_kernel(model, layer, h).cpu()),
            logit_field_spectra(seen["logits"][:, h]),
            pattn_spectrum(seen["x"], seen["y"][:, h], m["pinv_rtol"]),
            m["taus"],
            floor_settings(m),
        )
        ablated = probe.ablated(layer, h)
        losses = probe.truncation_curve(layer, h, full)
        mean_curve, mean_abl = losses.mean(1), float(ablated.mean())
        knee = knee_of(mean_curve, mean_full, mean_abl, m["knee_fraction"])
        in_metric = probe.truncation_curve(layer, h, full, gram).mean(1)
        knee_metric = knee_of(in_metric, mean_full, mean_abl, m["knee_fraction"])
        rows.append(
            {"layer": layer, "head": h, "knee": knee, "d_head": shape.d_head}
            | {"knee_inputs_metric": knee_metric}
            | {"loss_full": mean_full, "loss_ablated": mean_abl, "gap": mean_abl - mean_full}
            | ranks
        )
        curves += [
            {"layer": layer, "head": h, "r": r, "loss": float(v), "delta": float(v) - mean_full}
            for r, v in enumerate(mean_curve)
        ]
        per_window.append(_window_rows(layer, h, losses, ablated))
        log(f"layer {layer} head {h}: gap {mean_abl - mean_full:.4f}, knee {knee}, {ranks}")
    return rows, curves, per_window


def check_corpus(corpus, facts: dict) -> None:
    """The corpus must be the one the model was trained and validated on (its digests)."""
    described = corpus.describe()
    if any(described[k] != facts["corpus"].get(k) for k in CORPUS_DIGESTS):
        raise ValueError(
            f"the corpus under {corpus.root} is not the one the model was trained on "
            "(another Python's standard library, other manual pages, another split?); "
            "retrain: delete the model file"
        )


def measure_heads(
    cfg: dict,
    model_path,
    table_path,
    curves_path,
    log=print,
    prov: dict | None = None,
    windows_path=None,
    only=None,
) -> pd.DataFrame:
    """Every head's knee and ranks (docs/method.md §9 (a)–(d)): the per-head table
    (``table_path``), every truncation curve L(r) (``curves_path``) and, with ``windows_path``,
    every loss per knee window (parquet), stamped ``prov``. ``only``: the (layer, head) pairs to
    measure (None: every head; the GPU check's timing of a large model measures a few)."""
    torch.set_num_threads(cfg["threads"])
    device = resolve_device(cfg["device"])
    model, facts = load_model(model_path)
    model = model.to(device)
    corpus = corpus_of(cfg)
    check_corpus(corpus, facts)
    capture, knee_set = held_out_sets(cfg, corpus, model.shape.context)
    probe = KneeProbe(model, knee_set.to(device))
    rows, curves, per_window = [], [], []
    pairs = only or [(la, h) for la in range(model.shape.layers) for h in range(model.shape.heads)]
    for layer in sorted({la for la, _ in pairs}):
        full = probe.window_losses(layer)  # the same at every layer, up to the batch order
        heads = sorted(h for la, h in pairs if la == layer)
        layer_rows, layer_curves, layer_windows = _layer_rows(
            cfg, model, layer, heads, capture, probe, full, log
        )
        rows += layer_rows
        curves += layer_curves
        per_window += layer_windows
    table = pd.DataFrame(rows)
    write_table(table, table_path, prov)
    write_table(pd.DataFrame(curves), curves_path, prov)
    if windows_path is not None:
        write_table(pd.concat(per_window, ignore_index=True), windows_path, prov)
    return table
