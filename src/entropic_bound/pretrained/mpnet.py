"""MPNet: BERT's blocks (:mod:`.bert`) with a learned bias on the logits by relative position.

Every layer's logit of query i and key j gains ``bias[h, bucket(j - i)]`` (one table of
``buckets × H`` shared by all layers), so a head's logit field is its bilinear form plus a
Toeplitz matrix. The buckets: 16 per direction (key before or after the query), exact for
distances 0 … 7, then logarithmic up to 128 and the last bucket beyond. Positions of the learned
embeddings start after the padding id, and padding tokens sit at the padding position.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from entropic_bound.pretrained.bert import Encoder

#: the padding id whose position embedding is the padding position: the reference fixes it at 1
PADDING_ID = 1
#: the distance from which every bucket is the last
MAX_DISTANCE = 128


def relative_bucket(relative: torch.Tensor, buckets: int = 32, max_distance: int = MAX_DISTANCE):
    """The bucket of each ``relative`` position (key minus query) as the reference computes it:
    ``buckets/2`` per direction (the second half for keys after the query), the first half of
    those exact distances, the rest logarithmic, the arithmetic kept float32 so that the
    boundaries fall where they fell in training."""
    half = buckets // 2
    n = -relative
    out = (n < 0).to(torch.long) * half
    n = n.abs()
    exact = half // 2
    large = exact + (
        torch.log(n.float() / exact) / math.log(max_distance / exact) * (half - exact)
    ).to(torch.long)
    large = torch.minimum(large, torch.full_like(large, half - 1))
    return out + torch.where(n < exact, n, large)


class MPNetEncoder(Encoder):
    """An MPNet encoder (``model_type`` "mpnet")."""

    LAYER = {
        "q": "attention.attn.q",
        "k": "attention.attn.k",
        "v": "attention.attn.v",
        "o": "attention.attn.o",
        "ln1": "attention.LayerNorm",
        "ff1": "intermediate.dense",
        "ff2": "output.dense",
        "ln2": "output.LayerNorm",
    }
    PREFIXES = ("", "mpnet.")

    def _read_embeddings(self, file) -> dict:
        c = self.cfg
        return {
            "word": self._get(file, "embeddings.word_embeddings.weight", (c.vocab, c.d_model)),
            "position": self._get(
                file, "embeddings.position_embeddings.weight", (c.max_positions, c.d_model)
            ),
            "ln": self._norm(file, "embeddings.LayerNorm"),
            "relative": self._get(
                file, "encoder.relative_attention_bias.weight", (c.buckets, c.heads)
            ),
        }

    @property
    def max_len(self) -> int:
        """Positions run from PADDING_ID + 1: the table holds that many fewer windows' tokens."""
        return self.cfg.max_positions - PADDING_ID - 1

    def embed(self, ids: torch.Tensor) -> torch.Tensor:
        e = self.embeddings
        real = (ids != PADDING_ID).long()
        positions = torch.cumsum(real, dim=1) * real + PADDING_ID
        x = e["word"][ids] + e["position"][positions]
        return F.layer_norm(x, (self.cfg.d_model,), *e["ln"], eps=self.cfg.eps)

    def position_bias(self, n: int) -> torch.Tensor:
        """[H, n, n]: head h's bias of query i on key j."""
        pos = torch.arange(n)
        buckets = relative_bucket(pos[None, :] - pos[:, None], self.cfg.buckets)
        return self.embeddings["relative"][buckets].permute(2, 0, 1).contiguous()
