"""The planners, as Python values in and out.

- :func:`plan_partitions`: AccTFM's micro-batch planner (section 4.2.2,
  Algorithm 1; docs/compressed.md).
- :func:`stage_partition`, :func:`repack`: DynPipe's stage rebalancing
  (DynPipe, sections 3.4-3.5; docs/migration.md).
- :class:`BalancePlan` (from :meth:`spccl.Comm.balance_plan`, collective):
  SEMI-migration's plan (Eq. (1)-(3)); :func:`fit_linear_cost`
  for its cost lines.

All but the balance plan are local computations: no communicator, no
messages. Bad values raise :class:`spccl.InvalidArgumentError` naming them
(the library's own message for what only it checks, e.g. a memory capacity
no partition fits).
"""
from __future__ import annotations

import builtins
import math
from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from . import _spccl
from ._compressed import _int_argument
from ._enums import BalanceAction, StageMethod, enum_value
from ._errors import InvalidArgumentError


def _float_list(values: Any, name: str, columns: Optional[int] = None) -> np.ndarray:
    """values as a float64 array of 1 dimension (or ``(n, columns)``)."""
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidArgumentError(f"{name}: expected a sequence of numbers", 3) from None
    if columns is None and array.ndim != 1:
        raise InvalidArgumentError(f"{name}: expected a flat sequence of numbers, got shape "
                                   f"{array.shape}", 3)
    if columns is not None:
        if array.size == 0:
            array = array.reshape(0, columns)
        if array.ndim != 2 or array.shape[1] != columns:
            raise InvalidArgumentError(f"{name}: expected a sequence of {columns}-tuples, got "
                                       f"shape {array.shape}", 3)
    return array


def _int_list(values: Any, name: str) -> List[int]:
    try:
        array = np.asarray(values)
    except (TypeError, ValueError):
        raise InvalidArgumentError(f"{name}: expected a sequence of ints", 3) from None
    if array.ndim != 1 or (array.size and array.dtype.kind not in "iu"):
        raise InvalidArgumentError(f"{name}: expected a flat sequence of ints, got "
                                   f"{array.dtype} of shape {array.shape}", 3)
    return [int(v) for v in array]


def _number(value: Any, name: str) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        raise InvalidArgumentError(f"{name}: expected a number, got {type(value).__name__}",
                                   3) from None


# ---- micro-batch planner ----

@dataclass(frozen=True)
class MicroBatchPlan:
    """:func:`plan_partitions`' result: ``sizes[l]`` is layer l's number of
    micro-batches (1, 2 or 4), ``seconds`` the plan's predicted completion
    time."""

    sizes: List[int]
    seconds: float


def plan_partitions(layers: Sequence[Tuple[float, float]], alpha: float, beta: float,
                    backward: bool = False) -> MicroBatchPlan:
    """``spcclPlanPartitions``: each layer's micro-batch count from {1, 2, 4}
    so that one micro-batch's compute overlaps the previous one's
    all-reduce. layers: ``(compute_seconds, comm_bytes)`` per layer for the
    whole batch; a micro-batch of K computes for compute_seconds / K and
    communicates for alpha + beta · comm_bytes / K. backward: plan the
    backward pass (layers in reverse order; ``sizes[l]`` is still layer
    l's)."""
    table = _float_list(layers, "layers", columns=2)
    sizes, seconds = _spccl.plan_partitions(table[:, 0].tolist(), table[:, 1].tolist(),
                                            _number(alpha, "alpha"), _number(beta, "beta"),
                                            bool(backward))
    return MicroBatchPlan(list(sizes), seconds)


# ---- stage rebalancing ----

@dataclass(frozen=True)
class StagePartition:
    """:func:`stage_partition`'s result: ``stage_of_layer[l]`` is layer l's
    stage (non-decreasing, every stage non-empty); the bottleneck stage's
    summed layer cost and the largest stage's summed layer memory (0
    without layer_mem); diffusion rounds run and Lemma 2's bound on them
    (both 0 for the exact methods)."""

    stage_of_layer: List[int]
    max_stage_cost: float
    max_stage_memory: float
    rounds: int
    round_bound: int


def stage_partition(layer_costs: Sequence[float], n_stages: int, *,
                    layer_mem: Optional[Sequence[float]] = None,
                    mem_capacity: float = math.inf,
                    method: StageMethod | str = StageMethod.BY_TIME,
                    start: Optional[Sequence[int]] = None) -> StagePartition:
    """``spcclStagePartition``: contiguous layers onto n_stages pipeline
    stages, each within mem_capacity (summed layer_mem).

    method: ``"by_time"`` (the partition minimising the slowest stage's
    summed layer_costs, exact), ``"by_parameters"`` (minimising the largest
    stage's summed layer_mem, exact; needs layer_mem) or ``"diffusion"``
    (from the partition ``start``, boundary layers move to the lighter
    neighbour while that helps). A capacity no partition fits raises."""
    costs = _float_list(layer_costs, "layer_costs")
    memory = [] if layer_mem is None else _float_list(layer_mem, "layer_mem").tolist()
    if layer_mem is not None and len(memory) != costs.size:
        raise InvalidArgumentError(f"layer_mem: has {len(memory)} layers, layer_costs has "
                                   f"{costs.size}", 3)
    how = enum_value(StageMethod, method, "method")
    if how == StageMethod.DIFFUSION:
        if start is None:
            raise InvalidArgumentError("start: the diffusion method starts from a partition; "
                                       "pass start=[stage of each layer]", 3)
        layout = _int_list(start, "start")
        if len(layout) != costs.size:
            raise InvalidArgumentError(f"start: has {len(layout)} layers, layer_costs has "
                                       f"{costs.size}", 3)
    elif start is not None:
        raise InvalidArgumentError(f"start: only the diffusion method takes a starting partition "
                                   f"(method is {how.name.lower()})", 3)
    else:
        layout = []
    result = _spccl.stage_partition(costs.tolist(), memory, _int_argument(n_stages, "n_stages"),
                                    _number(mem_capacity, "mem_capacity"), int(how), layout)
    stage_of_layer, max_cost, max_memory, rounds, bound = result
    return StagePartition(list(stage_of_layer), max_cost, max_memory, rounds, bound)


@dataclass(frozen=True)
class Repack:
    """:func:`repack`'s result: the new ``stage_of_layer`` and the number of
    ``stages`` it uses."""

    stage_of_layer: List[int]
    stages: int


def repack(layer_mem: Sequence[float], stage_of_layer: Sequence[int], mem_capacity: float,
           target_stages: int = 0) -> Repack:
    """``spcclRepack``: first-fit re-packing onto fewer stages (DynPipe
    section 3.5). The first pair of neighbouring stages whose summed
    layer_mem fits mem_capacity merges, repeatedly, until none fits or
    target_stages is reached (0: as few as possible). stage_of_layer: the
    current partition (stages 0 .. S−1 in order, each non-empty). A stage
    that already exceeds the capacity, or an unreachable target, raises."""
    memory = _float_list(layer_mem, "layer_mem")
    layout = _int_list(stage_of_layer, "stage_of_layer")
    if len(layout) != memory.size:
        raise InvalidArgumentError(f"stage_of_layer: has {len(layout)} layers, layer_mem has "
                                   f"{memory.size}", 3)
    n_stages = max(layout) + 1 if layout else 0
    packed, stages = _spccl.repack(memory.tolist(), layout, n_stages,
                                   _number(mem_capacity, "mem_capacity"),
                                   _int_argument(target_stages, "target_stages"))
    return Repack(list(packed), stages)


# ---- SEMI-migration's balance plan ----

def fit_linear_cost(columns: Sequence[float], seconds: Sequence[float]) -> Tuple[float, float]:
    """``spcclFitLinearCost``: the least-squares line ``(a, b)``, seconds ≈
    a + b·columns, through n ≥ 1 measured points (one point, or all
    columns equal: b = 0, a = the mean time) — a cost line for
    :class:`BalanceCostModel`."""
    x = _float_list(columns, "columns")
    y = _float_list(seconds, "seconds")
    if x.size != y.size:
        raise InvalidArgumentError(f"seconds: has {y.size} points, columns has {x.size}", 3)
    return _spccl.fit_linear_cost(x.tolist(), y.tolist())


@dataclass(frozen=True)
class BalanceCostModel:
    """``spcclBalanceCostModel_t``. Costs are lines ``(a, b)``: a + b·c seconds
    for c columns (fit them from measurements with :func:`fit_linear_cost`).

    straggler_tolerance: a rank straggles when T_i > T_min · (1 + this).
    omega1: Ω1, the static cost of resizing; omega2: Ω2(c), extracting c
    columns for resizing; phi1: Φ1(c), sending c migrated columns and
    collecting the results; phi2: Φ2(c), a helper computing c columns,
    (0, 0) for the helpers' measured speed max_y T_y / L_y. Every rank must
    pass the same model."""

    straggler_tolerance: float = 0.05
    omega1: float = 0.0
    omega2: Tuple[float, float] = (0.0, 0.0)
    phi1: Tuple[float, float] = (0.0, 0.0)
    phi2: Tuple[float, float] = (0.0, 0.0)

    def fields(self) -> List[float]:
        """The eight numbers in the C struct's order."""
        values = [_number(self.straggler_tolerance, "straggler_tolerance"),
                  _number(self.omega1, "omega1")]
        for name in ("omega2", "phi1", "phi2"):
            line = _float_list(getattr(self, name), name)
            if line.size != 2:
                raise InvalidArgumentError(f"{name}: expected a line (a, b), got {line.size} "
                                           "numbers", 3)
            values += line.tolist()
        return values


@dataclass(frozen=True)
class BalanceRank:
    """One rank's entry of a :class:`BalancePlan`: its gathered T_i, M_i and
    L_i, γ_i of Eq. (1) against T_min, and the columns it migrates to the
    helpers and prunes."""

    action: BalanceAction
    iter_time: float
    matmul_time: float
    columns: int
    gamma: float
    migrate_columns: int
    resize_columns: int


@dataclass(frozen=True)
class BalancePlan:
    """``spcclBalancePlan_t``: the same on every rank. ``ranks[r]`` is rank
    r's decision; t_min the fastest iteration time; stragglers z;
    migrators x of Eq. (3); beta the share migrated by a single straggler
    (Eq. (2)), else 0."""

    t_min: float
    stragglers: int
    migrators: int
    beta: float
    ranks: List[BalanceRank]

    def slice(self, migrator: int, rank: int) -> builtins.slice:
        """``spcclBalanceSlice``: the columns of migrator's migrate_columns
        that rank computes, as ``slice(begin, begin + length)``. The helpers
        are the ranks that do not migrate, renumbered from the migrator as in
        :meth:`spccl.Comm.migrate_slice`."""
        begin, length = _spccl.balance_slice([int(r.action) for r in self.ranks],
                                             [r.migrate_columns for r in self.ranks],
                                             _int_argument(migrator, "migrator"),
                                             _int_argument(rank, "rank"))
        return slice(begin, begin + length)


def balance_plan_from_fields(fields: Tuple[Any, ...]) -> BalancePlan:
    t_min, stragglers, migrators, beta, ranks = fields
    return BalancePlan(t_min, stragglers, migrators, beta,
                       [BalanceRank(BalanceAction(r[0]), *r[1:]) for r in ranks])
