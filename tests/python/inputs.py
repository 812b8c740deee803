"""Seeded inputs every rank can rebuild for any other rank, so each rank
checks a collective's result against a reference it computes alone."""
from __future__ import annotations

from typing import Sequence

import numpy as np

# dtypes the bindings map to spccl types, and how exactly each reduces.
NUMPY_DTYPES = ["int8", "uint8", "int32", "uint32", "int64", "uint64", "float16", "float32",
                "float64"]
TORCH_DTYPES = ["int8", "uint8", "int32", "int64", "float16", "float32", "float64", "bfloat16"]


def tolerance(dtype_name: str) -> dict:
    """Float sums differ by association order; integers must be exact."""
    return {"float16": dict(rtol=2e-3, atol=2e-3), "bfloat16": dict(rtol=2e-2, atol=2e-2),
            "float32": dict(rtol=1e-5, atol=1e-6), "float64": dict(rtol=1e-12, atol=1e-12)}.get(
                dtype_name, dict(rtol=0, atol=0))


def values(rank: int, shape: Sequence[int], dtype_name: str, seed: int = 0,
           low: int = 0, high: int = 10) -> np.ndarray:
    """Small non-negative values (no integer overflow in a sum or a product
    over a few ranks), as float64 — cast to the wanted type by the caller."""
    rng = np.random.default_rng([seed, rank, sum(map(ord, dtype_name))])
    return rng.integers(low, high, size=tuple(shape)).astype(np.float64)


def sparse_values(rank: int, count: int, density: float, seed: int = 0) -> np.ndarray:
    """A float64 vector with about density * count non-zeros (ints 1..9)."""
    rng = np.random.default_rng([seed, rank, 7])
    x = np.zeros(count)
    nnz = int(count * density)
    x[rng.choice(count, size=nnz, replace=False)] = rng.integers(1, 10, size=nnz)
    return x


def gaussian_values(rank: int, count: int, seed: int = 0) -> np.ndarray:
    """float64 Gaussian values whose magnitude changes from block to block
    (scales 1e-3..1e2 per 64 elements) with one all-zero stretch, so that
    a quantizer's per-block scales matter."""
    rng = np.random.default_rng([seed, rank, 11])
    scales = np.repeat(10.0 ** rng.uniform(-3, 2, size=count // 64 + 1), 64)[:count]
    x = rng.standard_normal(count) * scales
    x[count // 3: count // 3 + 100] = 0.0
    return x
