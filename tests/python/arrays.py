"""numpy / torch twins of one float64 array, and back, for parametrised tests."""
from __future__ import annotations

from typing import Any

import numpy as np
import torch


def make(kind: str, data: np.ndarray, dtype_name: str) -> Any:
    if kind == "numpy":
        return data.astype(dtype_name)
    return torch.from_numpy(data).to(getattr(torch, dtype_name)).clone()  # never alias data


def to_numpy(x: Any) -> np.ndarray:
    if isinstance(x, torch.Tensor):
        return x.to(torch.float64).numpy()
    return np.asarray(x, dtype=np.float64)


def assert_close(actual: Any, expected: np.ndarray, dtype_name: str, tol: dict) -> None:
    got = to_numpy(actual)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    want = make("numpy", expected, "float64")
    # The reference rounded to the tested type, as the collective's result is.
    if dtype_name != "bfloat16":
        want = want.astype(dtype_name).astype(np.float64)
    np.testing.assert_allclose(got, want, **tol)
