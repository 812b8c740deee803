"""The compressed all-reduce's error bound as docs/compressed.md states it,
computed from every rank's input: the reference the tests hold results to."""
from __future__ import annotations

from typing import Sequence

import numpy as np

# h, half the widest quantizer step as a fraction of the block scale: the
# table of docs/compressed.md ("Codecs"), copied, not derived.
STEP_FRACTION = {("piecewise", 2): 1 / 2, ("piecewise", 4): 1 / 6, ("piecewise", 8): 1 / 14,
                 ("linear", 2): 1 / 2, ("linear", 4): 1 / 14, ("linear", 8): 1 / 254}
# The output type's rounding, relative (docs/compressed.md, "Error bound").
OUTPUT_ROUNDING = {"float32": 0.0, "float16": 2.0 ** -11, "bfloat16": 2.0 ** -8}


def schedule_factor(h: float, schedule: str, ranks: int) -> float:
    """|out - S| <= factor * A_b: two-shot h(2 + h), ring (1 + h)^n - 1."""
    return h * (2 + h) if schedule == "two_shot" else (1 + h) ** ranks - 1


def block_scale_sums(inputs: Sequence[np.ndarray], block_size: int) -> np.ndarray:
    """A_b per element: the sum over ranks of each rank's max |x| over the
    element's block (blocks of block_size consecutive elements)."""
    count = inputs[0].size
    padded = -(-count // block_size) * block_size
    total = np.zeros(padded // block_size)
    for x in inputs:
        blocks = np.zeros(padded)
        blocks[:count] = np.abs(x.ravel())
        total += blocks.reshape(-1, block_size).max(axis=1)
    return np.repeat(total, block_size)[:count].reshape(inputs[0].shape)


def error_bound(inputs: Sequence[np.ndarray], *, codec: str = "piecewise", bits: int = 4,
                block_size: int = 256, schedule: str = "two_shot", op: str = "sum",
                dtype: str = "float32") -> np.ndarray:
    """Per element, how far the compressed all-reduce of inputs (as the
    ranks hold them, in float64) may be from the exact sum or average."""
    n = len(inputs)
    scale_sums = block_scale_sums(inputs, block_size)
    # The quantizations, plus float32 rounding (the tests' 1e-5 n A_b).
    bound = (schedule_factor(STEP_FRACTION[(codec, bits)], schedule, n) + 1e-5 * n) * scale_sums
    exact = np.sum(inputs, axis=0)
    if op == "avg":
        bound, exact = bound / n, exact / n
    return bound + OUTPUT_ROUNDING[dtype] * (np.abs(exact) + bound)
