"""Compressed all-reduce (Comm.compressed_all_reduce): numpy and torch, every
codec, schedule and a range of bits, against the exact sum of every rank's
input within the bound docs/compressed.md states (compression_bound.py);
error feedback through a caller-owned residual; bad arguments."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import spccl
from arrays import make, to_numpy
from compression_bound import block_scale_sums, error_bound
from inputs import gaussian_values

COUNT = 1000  # not a multiple of any block size used: the last block is partial


@pytest.fixture(params=["all_ranks", "alone"])
def group(request, comm):
    """The job's communicator, or a 1-rank one of each rank's own (split):
    ctest runs 3 and 4 ranks, and a rank alone takes other code paths."""
    if request.param == "all_ranks":
        yield comm
        return
    alone = comm.split(comm.rank)
    yield alone
    alone.close()


def rank_inputs(comm, dtype, seed, count=COUNT):
    """Every rank's input as that rank holds it (rounded to dtype), in float64."""
    return [to_numpy(make("torch", gaussian_values(r, count, seed), dtype)) for r in
            range(comm.size)]


def assert_within_bound(result, inputs, op="sum", **config):
    exact = np.sum(inputs, axis=0) / (len(inputs) if op == "avg" else 1)
    error = np.abs(to_numpy(result) - exact)
    bound = error_bound(inputs, op=op, **config)
    beyond = np.flatnonzero(error > bound)
    assert beyond.size == 0, (f"{beyond.size} elements beyond the bound, first at {beyond[0]}: "
                              f"error {error.flat[beyond[0]]:.3g} > bound {bound.flat[beyond[0]]:.3g}")
    assert np.all(np.isfinite(to_numpy(result)))


@pytest.mark.parametrize("kind,dtype", [("numpy", "float32"), ("numpy", "float16"),
                                        ("torch", "float32"), ("torch", "float16"),
                                        ("torch", "bfloat16")])
@pytest.mark.parametrize("op", ["sum", "avg"])
def test_default_compression_within_bound(comm, kind, dtype, op):
    inputs = rank_inputs(comm, dtype, 1)
    x = make(kind, inputs[comm.rank], dtype)
    result = comm.compressed_all_reduce(x, op)
    assert type(result) is type(x) and result.dtype == x.dtype and result.shape == x.shape
    assert_within_bound(result, inputs, op, dtype=dtype)
    # Lossy: the default 4 bits do not reproduce the exact sum.
    assert not np.array_equal(to_numpy(result), np.sum(inputs, axis=0) /
                              (comm.size if op == "avg" else 1))


@pytest.mark.parametrize("codec", ["piecewise", "linear"])
@pytest.mark.parametrize("schedule", ["two_shot", "ring"])
@pytest.mark.parametrize("bits", [2, 4, 8])
def test_every_codec_schedule_and_bits_within_bound(group, codec, schedule, bits):
    inputs = rank_inputs(group, "float32", 2)
    config = dict(codec=codec, bits=bits, block_size=64, schedule=schedule)
    compression = spccl.Compression(**config)
    result = group.compressed_all_reduce(inputs[group.rank].astype(np.float32),
                                         compression=compression)
    assert_within_bound(result, inputs, **config)


def test_more_bits_are_closer(comm):
    inputs = rank_inputs(comm, "float32", 3)
    exact = np.sum(inputs, axis=0)
    errors = [np.abs(comm.compressed_all_reduce(inputs[comm.rank].astype(np.float32),
                                                compression=spccl.Compression(bits=b)) - exact).max()
              for b in (2, 4, 8)]
    assert errors[0] > errors[1] > errors[2], errors


@pytest.mark.parametrize("kind", ["numpy", "torch"])
@pytest.mark.parametrize("schedule", list(spccl.CompressSchedule))
def test_in_place_and_out(comm, kind, schedule):
    inputs = rank_inputs(comm, "float32", 4)
    compression = spccl.Compression(schedule=schedule)
    x = make(kind, inputs[comm.rank].reshape(40, 25), "float32")
    copy = make(kind, inputs[comm.rank].reshape(40, 25), "float32")
    out = make(kind, np.zeros((40, 25)), "float32")
    assert comm.compressed_all_reduce(copy, out=out, compression=compression) is out
    assert comm.compressed_all_reduce(x, out=x, compression=compression) is x
    np.testing.assert_array_equal(to_numpy(x), to_numpy(out))  # every rank: the same bits
    assert_within_bound(x, [i.reshape(40, 25) for i in inputs],
                        schedule=schedule.name.lower())


@pytest.mark.parametrize("schedule", ["two_shot", "ring"])
@pytest.mark.parametrize("kind,dtype", [("numpy", "float32"), ("torch", "bfloat16")])
def test_error_feedback_residual(group, schedule, kind, dtype):
    """The residual starts at zero, is non-zero after a call and changes from
    call to call; the results of T calls on the same inputs sum to
    T·S − Σ_ranks residual (docs/compressed.md, "Error feedback")."""
    inputs = rank_inputs(group, dtype, 5)
    compression = spccl.Compression(schedule=schedule, block_size=64)
    residual = make(kind, np.zeros(COUNT), "float32")  # float32 whatever x's dtype
    x = make(kind, inputs[group.rank], dtype)
    calls = 6
    total = np.zeros(COUNT)
    previous = to_numpy(residual)
    for call in range(calls):
        result = group.compressed_all_reduce(x, compression=compression, residual=residual)
        if call == 0:  # a zero residual: the plain bound holds
            assert_within_bound(result, inputs, dtype=dtype, block_size=64, schedule=schedule)
        now = to_numpy(residual)
        assert np.any(now != 0) and np.any(now != previous), call
        previous = now
        total += to_numpy(result)
    residuals = to_numpy(group.all_gather(residual)).sum(axis=0)
    exact = np.sum(inputs, axis=0)
    scale = block_scale_sums(inputs, 64).max()
    # float32 sums and the output type's rounding of each result.
    rounding = {"float32": 1e-5, "bfloat16": 2.0 ** -8}[dtype] * calls * scale
    np.testing.assert_allclose(total, calls * exact - residuals, rtol=0, atol=rounding)
    # Without feedback the same T calls drift by T times one call's error.
    plain = group.compressed_all_reduce(x, compression=compression)
    assert np.abs(total - calls * exact).max() < calls * np.abs(to_numpy(plain) - exact).max()


def test_compression_config():
    default = spccl.Compression()
    assert (default.codec, default.bits, default.block_size, default.schedule) == (
        spccl.Codec.PIECEWISE, 4, 256, spccl.CompressSchedule.TWO_SHOT)
    named = spccl.Compression(codec="Linear", bits=np.int64(8), block_size=64, schedule="ring")
    assert named == spccl.Compression(spccl.Codec.LINEAR, 8, 64, spccl.CompressSchedule.RING)
    assert str(named) == "linear 8-bit, block 64, ring"
    assert spccl.Compression(schedule="two-shot").schedule == spccl.CompressSchedule.TWO_SHOT
    with pytest.raises(AttributeError):
        default.bits = 2  # frozen: a configuration is shared by value


@pytest.mark.parametrize("fields,message", [
    (dict(bits=9), r"bits: 9 is outside 2\.\.8"), (dict(bits=1), r"bits: 1 is outside 2\.\.8"),
    (dict(bits=4.0), "bits: expected an int, got float"),
    (dict(bits=True), "bits: expected an int, got bool"),
    (dict(codec="zstd"), r"codec 'zstd' is not one of \['piecewise', 'linear'\]"),
    (dict(codec=2), "codec 2 is not one of"),
    (dict(schedule="tree"), r"schedule 'tree' is not one of \['two_shot', 'ring'\]"),
    (dict(block_size=0), "block_size: 0 elements per scale; must be >= 1"),
    (dict(block_size="64"), "block_size: expected an int, got str")])
def test_bad_compression_fields(fields, message):
    with pytest.raises(spccl.InvalidArgumentError, match=message):
        spccl.Compression(**fields)


def test_bad_arguments_name_the_argument(comm):
    x = np.ones(COUNT, dtype=np.float32)
    with pytest.raises(spccl.InvalidArgumentError, match="x: dtype float64 is not supported by "
                                                         "the compressed all-reduce"):
        comm.compressed_all_reduce(np.ones(4))
    with pytest.raises(spccl.InvalidArgumentError, match="x: dtype torch.int32 is not supported"):
        comm.compressed_all_reduce(torch.ones(4, dtype=torch.int32))
    with pytest.raises(spccl.InvalidArgumentError, match="x: .*not contiguous"):
        comm.compressed_all_reduce(torch.ones(4, 6).t())
    with pytest.raises(spccl.InvalidArgumentError, match="compression: expected "
                                                         "spccl.Compression, got dict"):
        comm.compressed_all_reduce(x, compression={"bits": 4})
    with pytest.raises(spccl.InvalidArgumentError, match="residual: dtype float64 is not float32"):
        comm.compressed_all_reduce(x, residual=np.zeros(COUNT))
    with pytest.raises(spccl.InvalidArgumentError, match="residual: dtype torch.float16 is not "
                                                         "float32"):
        comm.compressed_all_reduce(torch.ones(4, dtype=torch.float16),
                                   residual=torch.zeros(4, dtype=torch.float16))
    with pytest.raises(spccl.InvalidArgumentError, match=f"residual: has 3 elements, x has {COUNT}"):
        comm.compressed_all_reduce(x, residual=np.zeros(3, dtype=np.float32))
    read_only = np.zeros(COUNT, dtype=np.float32)
    read_only.flags.writeable = False
    with pytest.raises(spccl.InvalidArgumentError, match="residual: array is read-only"):
        comm.compressed_all_reduce(x, residual=read_only)
    with pytest.raises(spccl.InvalidArgumentError, match="residual: .*not contiguous"):
        comm.compressed_all_reduce(torch.ones(24), residual=torch.zeros(4, 6).t())
    with pytest.raises(spccl.InvalidArgumentError, match="out: has 3 elements"):
        comm.compressed_all_reduce(x, out=np.zeros(3, dtype=np.float32))
    # The library's own check, with its message, before any rank communicates.
    with pytest.raises(spccl.InvalidArgumentError,
                       match="spcclCompressedAllReduce: op max is not supported") as info:
        comm.compressed_all_reduce(x, "max")
    assert info.value.code == 3


def test_ranks_disagreeing_on_the_configuration_fail_every_rank(comm):
    if comm.size == 1:
        pytest.skip("needs two ranks to disagree")
    subs = []
    with pytest.raises(spccl.InvalidUsageError, match="disagree"):
        # In the split too: a rank still finishing it when a faster one
        # fails the call gets the failure there (seen under load).
        subs.append(comm.split(0))
        subs[0].compressed_all_reduce(np.ones(COUNT, dtype=np.float32),
                                      compression=spccl.Compression(bits=4 if comm.rank else 8))
    for sub in subs:
        sub.close()
