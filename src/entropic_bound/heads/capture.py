"""What a head sees and writes on held-out text (docs/method.md §9): captured per layer.

For layer l, on windows ``tokens`` [N, n]: the heads' shared input X (the residual after the
block's first LayerNorm) [N, n, d_model], their pre-softmax logits [N, H, n, n] (before the
causal mask) and their outputs Y before the output projection [N, H, n, d_head].
"""

from __future__ import annotations

import torch

from entropic_bound.heads.model import TinyGPT


@torch.no_grad()
def capture_layer(model: TinyGPT, tokens: torch.Tensor, layer: int, batch: int = 64) -> dict:
    """``{"x", "logits", "y"}`` of ``layer`` on ``tokens`` [N, n], batch by batch, on the CPU."""
    attn = model.blocks[layer].attn
    parts: dict[str, list[torch.Tensor]] = {"x": [], "logits": [], "y": []}
    try:
        for i in range(0, tokens.shape[0], batch):
            x = model.embed(tokens[i : i + batch])
            for block in model.blocks[:layer]:
                x = block(x)
            attn.capture = {}
            model.blocks[layer](x)
            for key in parts:
                parts[key].append(attn.capture[key].cpu())
    finally:
        attn.capture = None
    return {key: torch.cat(v) for key, v in parts.items()}
