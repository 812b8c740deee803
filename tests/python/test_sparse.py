"""Sparse all-reduce: dense numpy/torch in and out, COO in (numpy, torch)
with dense or COO out, torch sparse COO tensors of every layout, every
algorithm and encoding, and the planner's statistics — each against the
dense sum of every rank's input."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import spccl
from arrays import assert_close, make
from inputs import sparse_values, tolerance

COUNT = 5000
DTYPES = [("numpy", d) for d in ["int32", "uint32", "int64", "uint64", "float16", "float32",
                                  "float64"]] + \
         [("torch", d) for d in ["int32", "int64", "float16", "float32", "float64", "bfloat16"]]


def rank_inputs(comm, count=COUNT, density=0.02, seed=0):
    return [sparse_values(r, count, density, seed) for r in range(comm.size)]


@pytest.mark.parametrize("kind,dtype", DTYPES)
@pytest.mark.parametrize("density", [0.0, 0.01, 0.3])
def test_dense_in_dense_out(comm, kind, dtype, density):
    data = rank_inputs(comm, density=density, seed=1)
    result = comm.sparse_all_reduce(make(kind, data[comm.rank], dtype))
    assert_close(result, np.sum(data, axis=0), dtype, tolerance(dtype))


@pytest.mark.parametrize("kind", ["numpy", "torch"])
def test_avg_and_out_in_place(comm, kind):
    data = rank_inputs(comm, seed=2)
    x = make(kind, data[comm.rank], "float32")
    assert comm.sparse_all_reduce(x, "avg", out=x) is x
    assert_close(x, np.mean(data, axis=0), "float32", tolerance("float32"))


def test_multidimensional_dense(comm):
    data = [d.reshape(50, 100) for d in rank_inputs(comm, seed=3)]
    result = comm.sparse_all_reduce(torch.from_numpy(data[comm.rank]).float())
    assert result.shape == (50, 100)
    assert_close(result, np.sum(data, axis=0), "float32", tolerance("float32"))


@pytest.mark.parametrize("algorithm", list(spccl.SparseAlgorithm))
def test_every_algorithm_and_its_stats(comm, algorithm):
    data = rank_inputs(comm, seed=4)
    tag = 100 + int(algorithm)
    result = comm.sparse_all_reduce(data[comm.rank].astype(np.float32), tag=tag,
                                    algorithm=algorithm)
    assert_close(result, np.sum(data, axis=0), "float32", tolerance("float32"))
    stats = comm.sparse_stats(tag)
    assert isinstance(stats, spccl.SparseStats)
    assert stats.calls == 1
    assert isinstance(stats.algorithm, spccl.SparseAlgorithm)
    if algorithm != spccl.SparseAlgorithm.AUTO:
        assert stats.algorithm == algorithm
    assert stats.reason
    assert len(stats.predicted_seconds) == len(spccl.SparseAlgorithm)
    assert 0.0 <= stats.density <= 1.0


@pytest.mark.parametrize("encoding", list(spccl.SparseEncoding))
@pytest.mark.parametrize("partitioner", list(spccl.SparsePartitioner))
def test_every_encoding_and_partitioner(comm, encoding, partitioner):
    data = rank_inputs(comm, density=0.05, seed=5)
    result = comm.sparse_all_reduce(data[comm.rank].astype(np.int64), encoding=encoding,
                                    partitioner=partitioner,
                                    algorithm=spccl.SparseAlgorithm.BALANCED_PARALLELISM)
    np.testing.assert_array_equal(result, np.sum(data, axis=0).astype(np.int64))


def coo_of(rank, count, nnz, seed, index_dtype):
    """Unsorted indices with duplicates, and their values."""
    rng = np.random.default_rng([seed, rank])
    indices = rng.integers(0, count, size=nnz).astype(index_dtype)
    indices = np.concatenate([indices, indices[: nnz // 4]])  # duplicates, summed
    return indices, rng.integers(1, 10, size=indices.size).astype(np.float64)


def dense_of(indices, vals, count):
    x = np.zeros(count)
    np.add.at(x, indices.astype(np.int64), vals)
    return x


@pytest.mark.parametrize("index_dtype", ["int32", "uint32", "int64", "uint64"])
@pytest.mark.parametrize("kind", ["numpy", "torch"])
def test_coo_in_dense_out(comm, index_dtype, kind):
    if kind == "torch" and index_dtype.startswith("u"):
        pytest.skip("torch 1.13 has no unsigned 32/64-bit integers")
    coos = [coo_of(r, COUNT, 80, 6, index_dtype) for r in range(comm.size)]
    indices, vals = coos[comm.rank]
    if kind == "torch":
        indices, vals = torch.from_numpy(indices), torch.from_numpy(vals).float()
    result = comm.sparse_all_reduce_coo(indices, vals if kind == "torch" else vals.astype(np.float32),
                                        COUNT)
    assert tuple(result.shape) == (COUNT,)
    expected = np.sum([dense_of(i, v, COUNT) for i, v in coos], axis=0)
    assert_close(result, expected, "float32", tolerance("float32"))


@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
def test_coo_in_coo_out(comm, index_dtype):
    # Rank 0 holds one non-zero, the others many: the result's size is far
    # beyond what rank 0 alone could bound.
    coos = [coo_of(r, COUNT, 1 if r == 0 else 300, 7, index_dtype) for r in range(comm.size)]
    indices, vals = coos[comm.rank]
    out_indices, out_values = comm.sparse_all_reduce_coo_to_coo(indices, vals.astype(np.float64),
                                                                COUNT)
    expected = np.sum([dense_of(i, v, COUNT) for i, v in coos], axis=0)
    assert out_indices.dtype == np.dtype(index_dtype)
    assert np.all(np.diff(out_indices.astype(np.int64)) > 0)  # ascending, unique
    np.testing.assert_array_equal(out_indices, np.flatnonzero(expected))
    np.testing.assert_array_equal(out_values, expected[np.flatnonzero(expected)])


def torch_coo(rank, shape, sparse_dim, nnz, seed):
    """A random uncoalesced COO tensor with sparse_dim sparse dimensions."""
    g = torch.Generator().manual_seed(seed * 1000 + rank)
    indices = torch.stack([torch.randint(0, shape[d], (nnz,), generator=g)
                           for d in range(sparse_dim)])
    vals = torch.randint(1, 10, (nnz, *shape[sparse_dim:]), generator=g).float()
    return torch.sparse_coo_tensor(indices, vals, shape)


@pytest.mark.parametrize("shape,sparse_dim", [((1000,), 1), ((40, 30), 2), ((500, 16), 1),
                                              ((20, 10, 4), 2)])
def test_torch_sparse_coo_in_and_out(comm, shape, sparse_dim):
    inputs = [torch_coo(r, shape, sparse_dim, 25, 8) for r in range(comm.size)]
    result = comm.sparse_all_reduce(inputs[comm.rank])
    assert result.layout == torch.sparse_coo and result.is_coalesced()
    assert result.shape == torch.Size(shape)
    assert result.sparse_dim() == sparse_dim and result.dense_dim() == len(shape) - sparse_dim
    expected = torch.stack([t.to_dense() for t in inputs]).sum(0)
    torch.testing.assert_close(result.to_dense(), expected)
    # Only the rows with a non-zero travel back.
    assert result._nnz() == int((expected.reshape(expected.shape[:sparse_dim].numel(), -1) != 0)
                                .any(1).sum())


def test_torch_sparse_coo_empty_on_some_ranks(comm):
    shape = (300, 8)
    t = torch_coo(comm.rank, shape, 1, 5 if comm.rank == 0 else 0, 9)
    inputs = [torch_coo(r, shape, 1, 5 if r == 0 else 0, 9) for r in range(comm.size)]
    result = comm.sparse_all_reduce(t)
    torch.testing.assert_close(result.to_dense(), torch.stack([x.to_dense() for x in inputs]).sum(0))
