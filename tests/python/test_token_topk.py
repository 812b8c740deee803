"""Token top-k all-reduce (Comm.token_topk_all_reduce, token_mask_all_reduce)
against a numpy reference: the mask from the scores summed in rank order
(ties by lower index), kept rows all-reduced exactly or within the
compressed bound over the packed kept rows, pruned rows zeroed or local;
error feedback on kept rows only; bad arguments."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import spccl
from arrays import make, to_numpy
from compression_bound import error_bound
from inputs import gaussian_values, tolerance

TOKENS, HIDDEN = 24, 40


def rank_rows(comm, dtype, seed):
    return [to_numpy(make("torch", gaussian_values(r, TOKENS * HIDDEN, seed), dtype)).reshape(
        TOKENS, HIDDEN) for r in range(comm.size)]


def rank_scores(comm, seed):
    """Small integers: equal sums happen, so the tie rule is exercised."""
    return [np.random.default_rng([seed, r, 5]).integers(0, 4, TOKENS).astype(np.float32)
            for r in range(comm.size)]


def reference_mask(scores, keep):
    total = np.zeros(TOKENS, dtype=np.float32)
    for s in scores:  # rank order, float32, as spccl sums them
        total = total + s
    order = np.lexsort((np.arange(TOKENS), -total))  # higher sum first, then lower index
    mask = np.zeros(TOKENS, dtype=bool)
    mask[order[:keep]] = True
    return mask


@pytest.mark.parametrize("kind,dtype", [("numpy", "float32"), ("torch", "float32"),
                                        ("torch", "bfloat16")])
@pytest.mark.parametrize("keep", [0, 1, TOKENS // 2, TOKENS])
@pytest.mark.parametrize("prune", ["zero", "keep_local"])
def test_topk_exact(comm, kind, dtype, keep, prune):
    rows, scores = rank_rows(comm, dtype, 1), rank_scores(comm, 1)
    x = make(kind, rows[comm.rank], dtype)
    mask = comm.token_topk_all_reduce(x, make(kind, scores[comm.rank], "float32"), keep,
                                      prune=prune)
    expected_mask = reference_mask(scores, keep)
    assert type(mask) is type(x)
    np.testing.assert_array_equal(to_numpy(mask).astype(bool), expected_mask)
    got = to_numpy(x)
    tol = tolerance(dtype)
    np.testing.assert_allclose(got[expected_mask], np.sum(rows, axis=0)[expected_mask], **tol)
    pruned = rows[comm.rank][~expected_mask] if prune == "keep_local" else 0.0
    np.testing.assert_array_equal(got[~expected_mask], np.broadcast_to(pruned, got[~expected_mask].shape))


@pytest.mark.parametrize("schedule", ["two_shot", "ring"])
@pytest.mark.parametrize("op", ["sum", "avg"])
def test_topk_compressed_within_bound_over_the_packed_rows(comm, schedule, op):
    rows, scores = rank_rows(comm, "float32", 2), rank_scores(comm, 2)
    keep = TOKENS // 2
    config = dict(bits=4, block_size=64, schedule=schedule)
    x = rows[comm.rank].astype(np.float32)
    mask = comm.token_topk_all_reduce(x, scores[comm.rank], keep, op,
                                      compression=spccl.Compression(**config))
    packed = [r[mask].ravel() for r in rows]  # blocks run over the packed kept rows
    exact = np.sum(packed, axis=0) / (comm.size if op == "avg" else 1)
    error = np.abs(x[mask].ravel() - exact)
    assert np.all(error <= error_bound(packed, op=op, **config))
    assert np.all(x[~mask] == 0)


def test_mask_call_equals_topk_call(comm):
    rows, scores = rank_rows(comm, "float32", 3), rank_scores(comm, 3)
    compression = spccl.Compression(bits=4)
    by_scores = rows[comm.rank].astype(np.float32)
    mask = comm.token_topk_all_reduce(by_scores, scores[comm.rank], 7, compression=compression)
    for given in (mask, mask.astype(np.uint8), torch.from_numpy(mask)):
        by_mask = make("torch" if isinstance(given, torch.Tensor) else "numpy",
                       rows[comm.rank], "float32")
        assert comm.token_mask_all_reduce(by_mask, given, compression=compression) is by_mask
        np.testing.assert_array_equal(to_numpy(by_mask), by_scores)  # the same bits


def test_error_feedback_on_kept_rows_only(comm):
    rows, scores = rank_rows(comm, "float32", 4), rank_scores(comm, 4)
    residual = np.zeros((TOKENS, HIDDEN), dtype=np.float32)
    compression = spccl.Compression(bits=2)
    x = rows[comm.rank].astype(np.float32)
    mask = comm.token_topk_all_reduce(x, scores[comm.rank], 5, compression=compression,
                                      residual=residual)
    assert np.any(residual[mask] != 0) and np.all(residual[~mask] == 0)
    first = residual.copy()
    comm.token_mask_all_reduce(rows[comm.rank].astype(np.float32), mask, compression=compression,
                               residual=residual)
    assert np.any(residual[mask] != first[mask]) and np.all(residual[~mask] == 0)


def test_bad_arguments_name_the_argument(comm):
    x = np.ones((TOKENS, HIDDEN), dtype=np.float32)
    scores = np.ones(TOKENS, dtype=np.float32)
    cases = [
        (lambda: comm.token_topk_all_reduce(np.ones(TOKENS, np.float32), scores, 1),
         r"x: must be 2-D \[tokens, hidden\], got shape \(24,\)"),
        (lambda: comm.token_topk_all_reduce(np.ones((TOKENS, 2)), scores, 1),
         "x: dtype float64 is not supported by the compressed all-reduce"),
        (lambda: comm.token_topk_all_reduce(x, scores.astype(np.float64), 1),
         "scores: dtype float64 is not float32"),
        (lambda: comm.token_topk_all_reduce(x, scores[:3], 1),
         "scores: has 3 elements, x has 24 tokens"),
        (lambda: comm.token_topk_all_reduce(x, scores, -1), "keep: -1 is negative"),
        (lambda: comm.token_topk_all_reduce(x, scores, 2.5), "keep: expected an int, got float"),
        (lambda: comm.token_topk_all_reduce(x, scores, TOKENS + 1),
         "spcclTokenTopkAllReduce: keep 25 exceeds tokens 24"),
        (lambda: comm.token_topk_all_reduce(x, scores, 1, prune="drop"),
         "prune 'drop' is not one of"),
        (lambda: comm.token_topk_all_reduce(x, scores, 1, residual=np.zeros_like(x)),
         "residual: error feedback needs compression="),
        (lambda: comm.token_topk_all_reduce(x, scores, 1, compression=spccl.Compression(),
                                            residual=np.zeros(3, np.float32)),
         "residual: has 3 elements"),
        (lambda: comm.token_mask_all_reduce(x, np.ones(TOKENS, dtype=np.int32)),
         "mask: dtype int32 is not bool or uint8"),
        (lambda: comm.token_mask_all_reduce(x, torch.ones(5, dtype=torch.bool)),
         "mask: has 5 elements, x has 24 tokens"),
        (lambda: comm.token_mask_all_reduce(x, np.ones(TOKENS, bool), "max"),
         "spcclTokenMaskAllReduce: op max is not supported"),
    ]
    for call, message in cases:
        with pytest.raises(spccl.InvalidArgumentError, match=message):
            call()
