"""Int8Linear on its own: per-token activation scales keep every row independent of the others."""

from __future__ import annotations

import torch

from quill_core._int8 import Int8Linear


def test_int8_linear_rows_are_independent():
    torch.manual_seed(1)
    linear = torch.nn.Linear(24, 10)
    layer = Int8Linear(linear)
    x = torch.randn(5, 24) * torch.tensor([1.0, 100.0, 0.01, 1.0, 5.0])[:, None]  # very different row scales
    together = layer(x)
    for i in range(5):
        assert torch.allclose(layer(x[i : i + 1])[0], together[i])
        assert torch.allclose(together[i], linear(x[i]), rtol=0.05, atol=0.05 * float(x[i].abs().max()))
