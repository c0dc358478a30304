"""P_attn's Gram matrix by blocked products is the einsum it replaced, bitwise."""

from __future__ import annotations

import pytest
import torch

from entropic_bound.predict.attention import (
    attention_native_gram,
    attention_native_pinv,
    attention_native_sum,
)


def einsum_gram(Z1: torch.Tensor, Z2: torch.Tensor) -> torch.Tensor:
    """The formula before the blocked products."""
    return torch.einsum("gbij,gbkj->gik", Z1, Z2)


@pytest.mark.parametrize(
    "G, B, d, dv",
    [
        (1, 16384, 16, 16),  # the frontier's and the paper's d = 16 at B = 4·n·d
        (1, 4096, 64, 64),  # d = 64 (a large run's stream is 16 384 of them: the slow test below)
        (2, 1000, 16, 16),  # several groups, B not a whole number of blocks
        (1, 2049, 8, 8),  # a tail of one sequence past whole blocks
        (3, 37, 5, 3),  # one block, d_v != d
        (1, 1, 4, 4),
    ],
)
def test_gram_is_the_einsum_bitwise(G, B, d, dv):
    gen = torch.Generator().manual_seed(B + d)
    Z1 = torch.randn(G, B, d, dv, generator=gen, dtype=torch.float64)
    Z2 = torch.randn(G, B, d + 1, dv, generator=gen, dtype=torch.float64)
    assert torch.equal(attention_native_gram(Z1, Z1), einsum_gram(Z1, Z1))
    assert torch.equal(attention_native_sum(Z1), einsum_gram(Z1, Z1))
    assert torch.equal(attention_native_gram(Z1, Z2), einsum_gram(Z1, Z2))


def test_gram_of_a_large_stream_is_the_einsum_bitwise():
    """d = n = 64 at the large run's B = 16 384, from P_attn's own Z = X̃⁺Y."""
    gen = torch.Generator().manual_seed(64)
    X = torch.randn(1, 16384, 64, 64, generator=gen, dtype=torch.float64)
    Z = attention_native_pinv(X) @ torch.randn(X.shape, generator=gen, dtype=torch.float64)
    del X
    assert torch.equal(attention_native_sum(Z), einsum_gram(Z, Z))


def test_gram_of_strided_and_empty_inputs():
    gen = torch.Generator().manual_seed(1)
    Z = torch.randn(1, 300, 8, 8, generator=gen, dtype=torch.float64).transpose(-1, -2)
    assert torch.equal(attention_native_gram(Z, Z), einsum_gram(Z, Z))
    empty = torch.zeros(1, 0, 4, 4, dtype=torch.float64)
    assert torch.equal(
        attention_native_gram(empty, empty), torch.zeros(1, 4, 4, dtype=torch.float64)
    )
    single = torch.randn(1, 300, 8, 8, generator=gen)  # float32: the einsum, as before
    assert torch.equal(attention_native_gram(single, single), einsum_gram(single, single))
