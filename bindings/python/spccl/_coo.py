"""torch sparse COO tensors <-> spccl's flat COO (one index per element).

spccl reduces vectors of ``count`` elements; a COO tensor of any shape is
that vector in row-major order. Hybrid tensors (``dense_dim > 0``, e.g. an
``nn.Embedding(sparse=True)`` gradient: one index per row, a row of values
each) expand to one index per element on the way in, and are gathered back
into rows on the way out, so the result has the input's layout.
"""
from __future__ import annotations

import math
from typing import Any, Tuple


def _row_major_strides(shape: Tuple[int, ...]) -> list[int]:
    strides, step = [], 1
    for extent in reversed(shape):
        strides.append(step)
        step *= extent
    return strides[::-1]


def flatten(t: Any) -> Tuple[Any, Any, int]:
    """(int64 element indices, 1-D contiguous values, count) of COO tensor t.

    Duplicates may stay: spccl sums them."""
    import torch

    sparse_shape = tuple(t.shape[: t.sparse_dim()])
    row_numel = math.prod(t.shape[t.sparse_dim():])
    indices, values = t._indices(), t._values()
    strides = torch.tensor(_row_major_strides(sparse_shape), dtype=torch.int64)
    rows = (indices * strides.unsqueeze(1)).sum(0) if indices.shape[0] else torch.zeros(
        indices.shape[1], dtype=torch.int64)
    if row_numel == 1:
        flat = rows
    else:
        flat = (rows.unsqueeze(1) * row_numel + torch.arange(row_numel)).reshape(-1)
    return flat.contiguous(), values.reshape(-1).contiguous(), math.prod(t.shape)


def unflatten(flat: Any, values: Any, like: Any) -> Any:
    """A coalesced COO tensor with like's shape, sparse_dim and dense_dim from
    ascending element indices and their values."""
    import torch

    shape = tuple(like.shape)
    sparse_dim = like.sparse_dim()
    sparse_shape = shape[:sparse_dim]
    row_numel = math.prod(shape[sparse_dim:])
    if row_numel == 1:
        rows, row_values = flat, values.reshape((-1, *shape[sparse_dim:]))
    else:
        # Ascending element indices give non-decreasing rows; a row whose
        # elements summed to zero in places gets those zeros back.
        all_rows = torch.div(flat, row_numel, rounding_mode="floor")
        rows, slot = torch.unique_consecutive(all_rows, return_inverse=True)
        row_values = torch.zeros((rows.numel(), row_numel), dtype=values.dtype)
        row_values[slot, flat - all_rows * row_numel] = values
        row_values = row_values.reshape((-1, *shape[sparse_dim:]))
    indices = torch.empty((sparse_dim, rows.numel()), dtype=torch.int64)
    remaining = rows.clone()
    for dim in reversed(range(sparse_dim)):
        indices[dim] = remaining % sparse_shape[dim]
        remaining = torch.div(remaining, sparse_shape[dim], rounding_mode="floor")
    result = torch.sparse_coo_tensor(indices, row_values, shape)
    return result._coalesced_(True)  # ascending and unique already
