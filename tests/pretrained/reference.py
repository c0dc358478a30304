"""The reference for the pretrained forward passes: ``transformers``' own model classes, their
X and Y read by hooks on the query map (its input) and the output projection (its input, the
heads' outputs side by side). Used only where transformers is installed."""

from __future__ import annotations

import torch

#: family -> (the layers' list, a layer's query map, a layer's output projection)
HOOKS = {
    "bert": (
        lambda m: m.encoder.layer,
        lambda b: b.attention.self.query,
        lambda b: b.attention.output.dense,
    ),
    "mpnet": (
        lambda m: m.encoder.layer,
        lambda b: b.attention.attn.q,
        lambda b: b.attention.attn.o,
    ),
    "llama": (lambda m: m.layers, lambda b: b.self_attn.q_proj, lambda b: b.self_attn.o_proj),
}


def load_reference(folder, **kw):
    """transformers' model of ``folder`` (local files only; eager attention, the one that
    every family has and that computes what the papers write)."""
    import transformers

    return transformers.AutoModel.from_pretrained(
        str(folder), local_files_only=True, attn_implementation="eager", **kw
    ).eval()


@torch.no_grad()
def reference_forward(model, family: str, ids, mask, heads: int, d_head: int):
    """(last hidden state [N, n, d], {layer: (X [N, n, d], Y [N, H, n, d_head])})."""
    layers, query, out = HOOKS[family]
    seen, handles = {}, []
    for i, layer in enumerate(layers(model)):
        handles.append(query(layer).register_forward_pre_hook(_keep(seen, "x", i)))
        handles.append(out(layer).register_forward_pre_hook(_keep(seen, "y", i)))
    try:
        hidden = model(input_ids=ids, attention_mask=mask).last_hidden_state
    finally:
        for h in handles:
            h.remove()
    N, n = ids.shape
    caps = {
        i: (seen["x", i], seen["y", i].view(N, n, heads, d_head).transpose(1, 2))
        for i in range(len(layers(model)))
    }
    return hidden, caps


def _keep(seen: dict, what: str, i: int):
    def hook(module, args):
        seen[what, i] = args[0].detach().clone()

    return hook


def max_differences(out, hidden, caps, mask) -> dict[str, float]:
    """The largest absolute differences of ours from the reference's on the real tokens:
    final hidden states, X and Y over every layer (padding rows carry no meaning)."""
    real = mask.bool()
    worst = {"hidden": (out.hidden - hidden).abs()[real].max().item(), "x": 0.0, "y": 0.0}
    for i, (x, y) in caps.items():
        worst["x"] = max(worst["x"], (out.layers[i].x - x).abs()[real].max().item())
        worst["y"] = max(worst["y"], (out.layers[i].y - y).abs().transpose(1, 2)[real].max().item())
    return worst
