"""The load-balancing collectives and the planners (docs/migration.md,
docs/compressed.md "Micro-batch planner"): SEMI-migration's broadcast,
slice, reduce and merged all-reduce, scatter/gather, on the job's ranks
against numpy references every rank computes from all ranks' seeded
inputs; the local planners against hand-worked cases and brute force; the
balance plan (collective) against the worked examples of
tests/unit/test_migrate_planner.cc; bad arguments."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch

import spccl
from arrays import assert_close, make, to_numpy
from inputs import NUMPY_DTYPES, TORCH_DTYPES, tolerance, values

CASES = [("numpy", d) for d in NUMPY_DTYPES] + [("torch", d) for d in TORCH_DTYPES]
SHAPE = (6, 5)


def inputs(comm, shape, dtype, seed):
    return [values(r, shape, dtype, seed) for r in range(comm.size)]


def expected_slice(rank, straggler, size, total):
    """docs/migration.md: r' = (r + e − s) mod e; helper r' takes block r' − 1
    of total cut into e − 1 nearly equal blocks, the first total mod (e − 1)
    one column more."""
    if size < 2 or rank == straggler:
        return 0, 0
    block = (rank + size - straggler) % size - 1
    base, extra = divmod(total, size - 1)
    begin = block * base + min(block, extra)
    return begin, base + (1 if block < extra else 0)


# ---- the collectives ----

@pytest.mark.parametrize("kind,dtype", CASES)
def test_migrate_broadcast_from_every_straggler(comm, kind, dtype):
    data = inputs(comm, SHAPE, dtype, 21)
    for straggler in range(comm.size):
        x = make(kind, data[comm.rank], dtype)
        assert comm.migrate_broadcast(x, straggler) is x  # in place
        assert_close(x, data[straggler], dtype, tolerance(dtype))


@pytest.mark.parametrize("total", [0, 1, 2, 7, 100, 101])
def test_migrate_slice_covers_every_column_once(comm, total):
    for straggler in range(comm.size):
        cols = comm.migrate_slice(straggler, total)
        assert isinstance(cols, slice) and cols.step is None
        begin, length = cols.start, cols.stop - cols.start
        assert (begin, length) == expected_slice(comm.rank, straggler, comm.size, total)
        everyone = comm.all_gather(np.array([begin, length], dtype=np.int64))
        covered = np.zeros(total, dtype=np.int64)
        for r, (b, n) in enumerate(everyone):
            covered[b:b + n] += 1
            if r == straggler:
                assert n == 0
        if comm.size > 1:
            np.testing.assert_array_equal(covered, np.ones(total, dtype=np.int64))
            lengths = np.delete(everyone[:, 1], straggler)
            assert lengths.max() - lengths.min() <= 1  # nearly equal blocks


@pytest.mark.parametrize("kind,dtype", CASES)
@pytest.mark.parametrize("op", ["sum", "max"])
def test_migrate_reduce_at_every_dest(comm, kind, dtype, op):
    data = inputs(comm, SHAPE, dtype, 22)
    reference = {"sum": np.sum, "max": np.max}[op](np.stack(data), axis=0)
    for dest in range(comm.size):
        result = comm.migrate_reduce(make(kind, data[comm.rank], dtype), dest, op)
        if comm.rank == dest:
            assert type(result) is (np.ndarray if kind == "numpy" else torch.Tensor)
            assert_close(result, reference, dtype, tolerance(dtype))
        else:
            assert result is None


@pytest.mark.parametrize("kind", ["numpy", "torch"])
def test_migrate_reduce_in_place_and_out(comm, kind):
    data = inputs(comm, (13,), "float64", 23)
    dest = comm.size - 1
    x = make(kind, data[comm.rank], "float64")
    sentinel = make(kind, np.full(13, -1.0), "float64")
    result = comm.migrate_reduce(x, dest, out=x if comm.rank == dest else sentinel)
    if comm.rank == dest:
        assert result is x
        assert_close(x, np.sum(np.stack(data), axis=0), "float64", tolerance("float64"))
    else:
        assert result is sentinel
        assert_close(sentinel, np.full(13, -1.0), "float64", tolerance("float64"))  # untouched


@pytest.mark.parametrize("kind", ["numpy", "torch"])
def test_semi_migration_of_a_matmul(comm, kind):
    """The whole pattern of SEMI-migration section IV: the straggler's inputs and
    its weight columns go to the helpers, each computes its slice of the
    columns, the results come back by a reduce and equal the straggler's
    own product."""
    rows, inner, total = 4, 6, 23
    for straggler in range(comm.size):
        rng = np.random.default_rng([straggler, 24])
        a_ref, b_ref = rng.standard_normal((rows, inner)), rng.standard_normal((inner, total))
        mine = comm.rank == straggler
        a = make(kind, a_ref if mine else np.zeros((rows, inner)), "float64")
        b = make(kind, b_ref if mine else np.zeros((inner, total)), "float64")
        comm.migrate_broadcast(a, straggler)
        comm.migrate_broadcast(b, straggler)
        cols = comm.migrate_slice(straggler, total)
        partial = np.zeros((rows, total))
        partial[:, cols] = to_numpy(a) @ to_numpy(b)[:, cols]
        product = comm.migrate_reduce(make(kind, partial, "float64"), straggler)
        if mine:
            expected = a_ref @ b_ref if comm.size > 1 else np.zeros((rows, total))
            np.testing.assert_allclose(to_numpy(product), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kind,dtype", CASES)
@pytest.mark.parametrize("op", ["sum", "max"])
def test_migrate_all_reduce_folds_each_ranks_part(comm, kind, dtype, op):
    """Every rank's contribution is x with its migrated part folded in at
    its offset (sizes differ by rank, rank 0 folds nothing); the result is
    the all-reduce of the contributions."""
    count = 30
    data = inputs(comm, (count,), dtype, 25)
    parts = [values(r, (r % 4 * 3,), dtype, 26) for r in range(comm.size)]
    offsets = [(7 * r) % (count - len(parts[r]) + 1) for r in range(comm.size)]
    fold = {"sum": np.add, "max": np.maximum}[op]
    contributions = []
    for r in range(comm.size):
        c = data[r].copy()
        c[offsets[r]:offsets[r] + len(parts[r])] = fold(
            c[offsets[r]:offsets[r] + len(parts[r])], parts[r])
        contributions.append(c)
    reference = {"sum": np.sum, "max": np.max}[op](np.stack(contributions), axis=0)
    migrated = make(kind, parts[comm.rank], dtype) if len(parts[comm.rank]) else None
    x = make(kind, data[comm.rank], dtype)
    result = comm.migrate_all_reduce(x, migrated, offsets[comm.rank], op)
    assert type(result) is type(x) and result.shape == x.shape
    assert_close(result, reference, dtype, tolerance(dtype))
    assert_close(x, data[comm.rank], dtype, tolerance(dtype))  # x is not changed


@pytest.mark.parametrize("kind", ["numpy", "torch"])
def test_migrate_all_reduce_in_place_with_a_2d_part(comm, kind):
    data = inputs(comm, (4, 5), "float32", 27)
    part = values(comm.rank, (2, 3), "float32", 28)  # read flat: 6 elements at offset 5
    x = make(kind, data[comm.rank], "float32")
    assert comm.migrate_all_reduce(x, make(kind, part, "float32"), 5, out=x) is x
    expected = np.zeros(20)
    for r in range(comm.size):
        c = data[r].reshape(-1).copy()
        c[5:11] += values(r, (2, 3), "float32", 28).reshape(-1)
        expected += c
    assert_close(x, expected.reshape(4, 5), "float32", tolerance("float32"))


@pytest.mark.parametrize("kind,dtype", CASES)
def test_scatter_gather_round_trip_from_every_root(comm, kind, dtype):
    rows = 2 * comm.size
    data = inputs(comm, (rows, 3), dtype, 29)
    for root in range(comm.size):
        x = make(kind, data[comm.rank], dtype)
        block = comm.scatter(x, root)
        assert tuple(block.shape) == (2, 3)
        assert_close(block, data[root][2 * comm.rank:2 * comm.rank + 2], dtype, tolerance(dtype))
        gathered = comm.gather(block, root)
        if comm.rank == root:
            assert tuple(gathered.shape) == (comm.size, 2, 3)
            assert_close(gathered.reshape(rows, 3), data[root], dtype, tolerance(dtype))
        else:
            assert gathered is None


@pytest.mark.parametrize("kind", ["numpy", "torch"])
def test_gather_of_distinct_inputs_and_scatter_out(comm, kind):
    data = inputs(comm, (5,), "int32", 30)
    root = comm.size - 1
    gathered = comm.gather(make(kind, data[comm.rank], "int32"), root)
    if comm.rank == root:
        assert_close(gathered, np.stack(data), "int32", tolerance("int32"))
    out = make(kind, np.zeros((1, 5)), "int32")
    x = make(kind, np.stack(data) if comm.rank == root else np.zeros((comm.size, 5)), "int32")
    assert comm.scatter(x, root, out=out) is out
    assert_close(out, data[comm.rank].reshape(1, 5), "int32", tolerance("int32"))


def test_bad_arguments_of_the_collectives(comm):
    x = np.ones(8, dtype=np.float32)
    read_only = np.ones(8, dtype=np.float32)
    read_only.flags.writeable = False
    with pytest.raises(spccl.InvalidArgumentError, match="x: array is read-only"):
        comm.migrate_broadcast(read_only, 0)  # written in place
    with pytest.raises(spccl.InvalidArgumentError, match="x: .*not contiguous"):
        comm.migrate_broadcast(torch.ones(4, 6).t(), 0)
    with pytest.raises(spccl.InvalidArgumentError, match="x: dtype bool is not supported"):
        comm.migrate_reduce(np.zeros(4, dtype=bool), 0)
    with pytest.raises(spccl.InvalidArgumentError, match="straggler: expected an int, got float"):
        comm.migrate_broadcast(x, 0.0)
    with pytest.raises(spccl.InvalidArgumentError, match="dest: expected an int, got str"):
        comm.migrate_reduce(x, "0")
    with pytest.raises(spccl.InvalidArgumentError, match="total: -1 is negative"):
        comm.migrate_slice(0, -1)
    # The library's checks, with its messages, before any rank communicates.
    with pytest.raises(spccl.InvalidArgumentError, match=rf"spcclMigrateBroadcast: straggler "
                                                         rf"{comm.size} is out of range for "
                                                         rf"{comm.size} ranks"):
        comm.migrate_broadcast(x, comm.size)
    with pytest.raises(spccl.InvalidArgumentError, match="spcclMigrateSlice: straggler -1 is out "
                                                         "of range"):
        comm.migrate_slice(-1, 10)
    with pytest.raises(spccl.InvalidArgumentError, match="spcclMigrateReduce: dest -2 is out of "
                                                         "range"):
        comm.migrate_reduce(x, -2)
    with pytest.raises(spccl.InvalidArgumentError, match="spcclGather: root 99 is out of range"):
        comm.gather(x, 99)
    # migrate_all_reduce's part.
    with pytest.raises(spccl.InvalidArgumentError, match="migrated: dtype float64 differs from "
                                                         "x's float32"):
        comm.migrate_all_reduce(x, np.ones(2), 0)
    with pytest.raises(spccl.InvalidArgumentError, match="offset: 7 \\+ migrated's 2 elements "
                                                         "exceed x's 8"):
        comm.migrate_all_reduce(x, np.ones(2, dtype=np.float32), 7)
    with pytest.raises(spccl.InvalidArgumentError, match="offset: -1 is negative"):
        comm.migrate_all_reduce(x, None, -1)
    with pytest.raises(spccl.InvalidArgumentError, match="migrated: .*not contiguous"):
        comm.migrate_all_reduce(np.ones(24, dtype=np.float32), torch.ones(4, 6).t(), 0)
    with pytest.raises(spccl.InvalidArgumentError, match="out: has 3 elements"):
        comm.migrate_all_reduce(x, out=np.zeros(3, dtype=np.float32))
    with pytest.raises(spccl.InvalidArgumentError, match="op 'median' is not one of"):
        comm.migrate_all_reduce(x, op="median")
    # scatter: x's first dimension is split among the ranks on every rank.
    with pytest.raises(spccl.InvalidArgumentError, match="out: has 3 elements, the collective "
                                                         "writes"):
        comm.scatter(np.ones((comm.size, 2), dtype=np.float32), out=np.zeros(3, dtype=np.float32))
    if comm.size > 1:
        with pytest.raises(spccl.InvalidArgumentError, match="x: the first dimension of shape "
                                                             r"\(\d+,\) must be a multiple"):
            comm.scatter(np.ones(comm.size + 1, dtype=np.float32))


# ---- the micro-batch planner (AccTFM Algorithm 1) ----

def test_plan_partitions_hand_worked_two_layers():
    """tests/unit/test_compress_planner.cc: two equal layers (compute 4 s,
    communication 4 s, alpha 1 s): (2, 2) finishing at 14 s is best."""
    plan = spccl.plan_partitions([(4, 4), (4, 4)], alpha=1.0, beta=1.0)
    assert plan == spccl.MicroBatchPlan([2, 2], 14.0)
    # Without latency the finest partitions win.
    assert spccl.plan_partitions([(4, 4), (4, 4), (1, 3)], 0.0, 1.0).sizes == [4, 4, 4]
    # beta scales bytes into seconds: 8 bytes at 0.5 s/byte are the same 4 s.
    assert spccl.plan_partitions(np.array([[4.0, 8.0], [4.0, 8.0]]), 1.0, 0.5).seconds == 14.0
    assert spccl.plan_partitions([], 1.0, 1.0) == spccl.MicroBatchPlan([], 0.0)


def test_plan_partitions_backward_is_the_reversed_forward_plan():
    layers = [(8, 1), (1, 8), (3, 3), (2, 6)]
    forward_of_reversed = spccl.plan_partitions(layers[::-1], 0.2, 1.0)
    backward = spccl.plan_partitions(layers, 0.2, 1.0, backward=True)
    assert backward.sizes == forward_of_reversed.sizes[::-1]
    assert backward.seconds == forward_of_reversed.seconds
    assert all(s in (1, 2, 4) for s in backward.sizes)


# ---- stage partitioning and re-packing (DynPipe) ----

def brute_force_partition(weights, memory, stages, capacity):
    """Smallest largest-stage sum of weights over all contiguous partitions
    into non-empty stages within capacity, or inf."""
    n, best = len(weights), math.inf
    for cuts in itertools.combinations(range(1, n), stages - 1):
        bounds = (0, *cuts, n)
        spans = list(zip(bounds, bounds[1:]))
        if memory is not None and any(sum(memory[a:b]) > capacity for a, b in spans):
            continue
        best = min(best, max(sum(weights[a:b]) for a, b in spans))
    return best


def stage_sums(values, layout, stages):
    sums = [0.0] * stages
    for v, s in zip(values, layout):
        sums[s] += v
    return sums


def test_stage_partition_hand_worked():
    """tests/unit/test_migrate_stages.cc: costs {4, 1, 1, 1, 1, 4} on 3 stages."""
    costs, mem = [4, 1, 1, 1, 1, 4], [1] * 6
    by_time = spccl.stage_partition(costs, 3)
    assert by_time == spccl.StagePartition([0, 1, 1, 1, 1, 2], 4.0, 0.0, 0, 0)
    by_params = spccl.stage_partition(costs, 3, layer_mem=mem, method="by_parameters")
    assert by_params.stage_of_layer == [0, 0, 1, 1, 2, 2]
    assert (by_params.max_stage_memory, by_params.max_stage_cost) == (2.0, 5.0)
    capped = spccl.stage_partition(costs, 3, layer_mem=mem, mem_capacity=3.0,
                                   method=spccl.StageMethod.BY_TIME)
    assert capped.max_stage_cost == 5.0 and capped.max_stage_memory <= 3.0


def test_stage_partition_is_optimal_against_brute_force():
    rng = np.random.default_rng(31)
    for trial in range(60):
        n = 2 + trial % 7
        stages = 1 + trial % n
        costs = rng.uniform(0.1, 10, n).round(2).tolist()
        memory = rng.uniform(0.5, 3, n).round(2).tolist() if trial % 2 else None
        capacity = sum(memory) / stages * 1.5 if memory else math.inf
        best = brute_force_partition(costs, memory, stages, capacity)
        if math.isinf(best):
            with pytest.raises(spccl.InvalidArgumentError, match="is too small for any partition"):
                spccl.stage_partition(costs, stages, layer_mem=memory, mem_capacity=capacity)
            continue
        found = spccl.stage_partition(costs, stages, layer_mem=memory, mem_capacity=capacity)
        layout = found.stage_of_layer
        assert layout[0] == 0 and layout[-1] == stages - 1
        assert all(b - a in (0, 1) for a, b in zip(layout, layout[1:])), layout
        assert max(stage_sums(costs, layout, stages)) == pytest.approx(best, rel=1e-12)
        assert found.max_stage_cost == pytest.approx(best, rel=1e-12)
        if memory:
            assert max(stage_sums(memory, layout, stages)) <= capacity


def test_stage_diffusion_improves_and_respects_memory():
    # The heavy layer 1 would balance time on stage 1 but does not fit there.
    held = spccl.stage_partition([1, 5, 1], 2, layer_mem=[1, 3, 1], mem_capacity=4.0,
                                 method="diffusion", start=[0, 0, 1])
    assert held.stage_of_layer == [0, 0, 1] and held.max_stage_memory <= 4.0
    # From everything on stage 0 the two stages end near the optimum 6 | 6.
    costs = [3, 3, 3, 3]
    moved = spccl.stage_partition(costs, 2, method="diffusion", start=[0, 0, 0, 1])
    assert moved.stage_of_layer == [0, 0, 1, 1] and moved.max_stage_cost == 6.0
    assert 0 < moved.rounds < moved.round_bound


def test_repack_first_fit_hand_worked():
    """Memory {2 | 1 | 1 | 3}, capacity 4: 0+1 (3), then +2 (4), then + 3 > 4."""
    assert spccl.repack([2, 1, 1, 3], [0, 1, 2, 3], 4.0) == spccl.Repack([0, 0, 0, 1], 2)
    assert spccl.repack([2, 1, 1, 3], [0, 1, 2, 3], 4.0, target_stages=3) == spccl.Repack(
        [0, 0, 1, 2], 3)
    assert spccl.repack(np.array([2.0, 1, 1, 3]), np.array([0, 1, 2, 3]), 100.0).stages == 1


def test_bad_planner_arguments():
    with pytest.raises(spccl.InvalidArgumentError, match=r"layers: expected a sequence of "
                                                         r"2-tuples, got shape \(3,\)"):
        spccl.plan_partitions([1, 2, 3], 1.0, 1.0)
    with pytest.raises(spccl.InvalidArgumentError, match="alpha: expected a number, got str"):
        spccl.plan_partitions([(1, 1)], "fast", 1.0)
    with pytest.raises(spccl.InvalidArgumentError, match="spcclPlanPartitions: layers\\[1\\] has "
                                                         "computeSeconds -1"):
        spccl.plan_partitions([(1, 1), (-1, 1)], 1.0, 1.0)
    with pytest.raises(spccl.InvalidArgumentError, match="spcclPlanPartitions: beta nan"):
        spccl.plan_partitions([(1, 1)], 1.0, math.nan)
    costs, mem = [1, 2, 3], [1, 5, 1]
    with pytest.raises(spccl.InvalidArgumentError, match="method 'greedy' is not one of"):
        spccl.stage_partition(costs, 2, method="greedy")
    with pytest.raises(spccl.InvalidArgumentError, match="start: the diffusion method starts "
                                                         "from a partition"):
        spccl.stage_partition(costs, 2, method="diffusion")
    with pytest.raises(spccl.InvalidArgumentError, match="start: only the diffusion method"):
        spccl.stage_partition(costs, 2, start=[0, 0, 1])
    with pytest.raises(spccl.InvalidArgumentError, match="layer_mem: has 2 layers, layer_costs "
                                                         "has 3"):
        spccl.stage_partition(costs, 2, layer_mem=[1, 1])
    with pytest.raises(spccl.InvalidArgumentError, match="start: expected a flat sequence of "
                                                         "ints"):
        spccl.stage_partition(costs, 2, method="diffusion", start=[0.0, 0.5, 1.0])
    with pytest.raises(spccl.InvalidArgumentError, match="n_stages: expected an int"):
        spccl.stage_partition(costs, 2.0)
    # The library's messages.
    with pytest.raises(spccl.InvalidArgumentError, match="nStages 4 exceeds nLayers 3"):
        spccl.stage_partition(costs, 4)
    with pytest.raises(spccl.InvalidArgumentError, match=r"layerCosts\[1\] = nan"):
        spccl.stage_partition([1, math.nan, 3], 2)
    with pytest.raises(spccl.InvalidArgumentError, match="memCapacity 4 is too small"):
        spccl.stage_partition(costs, 2, layer_mem=mem, mem_capacity=4.0)
    with pytest.raises(spccl.InvalidArgumentError, match="layerMem is NULL; partition by "
                                                         "parameters needs it"):
        spccl.stage_partition(costs, 2, method="by_parameters")
    with pytest.raises(spccl.InvalidArgumentError, match=r"stageOfLayer\[1\] = 2"):
        spccl.stage_partition(costs, 3, method="diffusion", start=[0, 2, 1])
    with pytest.raises(spccl.InvalidArgumentError, match="stage 1 needs 6"):
        spccl.repack(mem, [0, 1, 1], 4.0)
    with pytest.raises(spccl.InvalidArgumentError, match="targetStages 3"):
        spccl.repack(mem, [0, 1, 1], 6.0, target_stages=3)
    with pytest.raises(spccl.InvalidArgumentError, match="out of reach"):
        spccl.repack(mem, [0, 1, 1], 6.5, target_stages=1)
    with pytest.raises(spccl.InvalidArgumentError, match="stage_of_layer: has 2 layers, "
                                                         "layer_mem has 3"):
        spccl.repack(mem, [0, 1], 6.0)


# ---- the balance plan (collective; SEMI-migration Eq. (1)-(3)) ----

def test_fit_linear_cost():
    columns = [10, 20, 40, 80]
    exact = [0.5 + 0.01 * c for c in columns]
    assert spccl.fit_linear_cost(columns, exact) == pytest.approx((0.5, 0.01), rel=1e-12)
    noisy = [1.0, 2.5, 2.9, 4.4]
    b, a = np.polyfit(columns, noisy, 1)
    assert spccl.fit_linear_cost(np.array(columns), noisy) == pytest.approx((a, b), rel=1e-12)
    assert spccl.fit_linear_cost([5], [2.0]) == (2.0, 0.0)          # one point: flat
    assert spccl.fit_linear_cost([5, 5], [1.0, 3.0]) == (2.0, 0.0)  # equal columns: the mean
    with pytest.raises(spccl.InvalidArgumentError, match="seconds: has 1 points, columns has 2"):
        spccl.fit_linear_cost([1, 2], [1.0])
    with pytest.raises(spccl.InvalidArgumentError, match="spcclFitLinearCost: n 0 must be at "
                                                         "least 1"):
        spccl.fit_linear_cost([], [])
    with pytest.raises(spccl.InvalidArgumentError, match=r"point 1 \(2, inf\) is not finite"):
        spccl.fit_linear_cost([1, 2], [1.0, math.inf])


def test_balance_plan_single_straggler_migrates_to_every_helper(comm):
    """The last rank straggles: T = 2, M = 1.25 against T = 1 elsewhere, so
    γ = 0.8 and it sheds 80 of its 100 columns. Resizing costs Ω1 = 10 s,
    more than migrating everything, so Eq. (2) gives β = 1: it migrates all
    80, and the plan's slices equal migrate_slice's."""
    if comm.size == 1:
        pytest.skip("a rank alone has no helpers")
    straggler = comm.size - 1
    mine = comm.rank == straggler
    model = spccl.BalanceCostModel(omega1=10.0, phi1=(0.0, 0.0005))
    plan = comm.balance_plan(2.0 if mine else 1.0, 1.25 if mine else 0.5, 100, model)
    assert (plan.t_min, plan.stragglers, plan.migrators, plan.beta) == (1.0, 1, 1, 1.0)
    s = plan.ranks[straggler]
    assert s == spccl.BalanceRank(spccl.BalanceAction.MIGRATE, 2.0, 1.25, 100,
                                  pytest.approx(0.8), 80, 0)
    assert all(r.action == spccl.BalanceAction.KEEP and r.iter_time == 1.0
               for i, r in enumerate(plan.ranks) if i != straggler)
    cols = comm.migrate_slice(straggler, 80)
    everyone = comm.all_gather(np.array([cols.start, cols.stop], dtype=np.int64))
    assert [plan.slice(straggler, r) for r in range(comm.size)] == [
        slice(int(b), int(e)) for b, e in everyone]
    assert sum(e - b for b, e in everyone) == 80
    # The same plan on every rank: gather the migrated columns and γ.
    summary = comm.all_gather(np.array([plan.beta, s.gamma, s.migrate_columns]))
    assert (summary == summary[0]).all()


def test_balance_plan_several_stragglers_by_equation_3(comm):
    """tests/unit/test_migrate_planner.cc, 4 ranks: T = {4, 1, 2, 1.5},
    M = {3.75, 0.5, 2, 1}, Φ1(c) = 0.01 c: f(1) > 0 > f(2), so rank 0
    migrates its 80 columns (to ranks 1, 2, 3: 27, 27, 26) and ranks 2, 3
    resize 50 each."""
    if comm.size != 4:
        pytest.skip("the worked example has 4 ranks")
    t, m = [4, 1, 2, 1.5], [3.75, 0.5, 2, 1]
    plan = comm.balance_plan(t[comm.rank], m[comm.rank], 100,
                             spccl.BalanceCostModel(phi1=(0, 0.01)))
    assert (plan.t_min, plan.stragglers, plan.migrators) == (1.0, 3, 1)
    actions = [r.action for r in plan.ranks]
    assert actions == [spccl.BalanceAction.MIGRATE, spccl.BalanceAction.KEEP,
                       spccl.BalanceAction.RESIZE, spccl.BalanceAction.RESIZE]
    assert [r.migrate_columns for r in plan.ranks] == [80, 0, 0, 0]
    assert [r.resize_columns for r in plan.ranks] == [0, 0, 50, 50]
    assert [r.iter_time for r in plan.ranks] == t
    assert [plan.slice(0, r) for r in range(4)] == [slice(0, 0), slice(0, 27), slice(27, 54),
                                                    slice(54, 80)]


def test_balance_plan_bad_value_fails_every_rank_naming_it(comm):
    if comm.size == 1:
        pytest.skip("needs a peer to name")
    with pytest.raises(spccl.InvalidArgumentError, match="iterTime nan of rank 1"):
        comm.balance_plan(math.nan if comm.rank == 1 else 1.0, 0.5, 10)
    with pytest.raises(spccl.InvalidArgumentError, match="matmulTime 2 of rank 0"):
        comm.balance_plan(1.0, 2.0 if comm.rank == 0 else 0.5, 10)
    # A cost model the library rejects on one rank: that rank names the field,
    # the others name the rank.
    model = spccl.BalanceCostModel(phi1=(0, -1)) if comm.rank == 0 else None
    with pytest.raises(spccl.InvalidArgumentError,
                       match=r"costModel->phi1\[1\] = -1" if comm.rank == 0 else
                       "rank 0 passed invalid arguments"):
        comm.balance_plan(1.0, 0.5, 10, model)
    # Checked in Python on every rank, before any communicates.
    with pytest.raises(spccl.InvalidArgumentError, match="cost_model: expected "
                                                         "spccl.BalanceCostModel, got dict"):
        comm.balance_plan(1.0, 0.5, 10, {"omega1": 1})
    with pytest.raises(spccl.InvalidArgumentError, match="phi2: expected a line"):
        comm.balance_plan(1.0, 0.5, 10, spccl.BalanceCostModel(phi2=(1, 2, 3)))
    with pytest.raises(spccl.InvalidArgumentError, match="iter_time: expected a number"):
        comm.balance_plan("slow", 0.5, 10)
