#!/usr/bin/python3
"""Elastic data-parallel training that survives the death of a rank.

Each rank fits the same linear model to its own shard of data (numpy,
float64), averaging the gradients with spccl's all-reduce. At step
``--kill-step`` rank ``--kill-rank`` kills itself with SIGKILL. The
survivors' all-reduce of that step fails (the peer is gone: RemoteError, or
TimeoutError after the communicator's timeout); they revoke the
communicator, agree on which ranks failed, shrink it to the survivors,
agree on the step to redo (a failed collective may have finished on some
ranks, which then take that step back) and redo it there, then train on
(docs/fault-tolerance.md).

At the end every survivor compares its parameters with a reference
computed locally without spccl: all the shards up to the failure, the
survivors' shards from that step on. They must match (to the rounding of
a different summation order); the exit status says whether they did.

    build/bin/spcclrun --keep-going -n 4 /usr/bin/python3 examples/elastic_shrink.py

Put bindings/python's build (build/python) on PYTHONPATH, or pip install it.
"""
from __future__ import annotations

import argparse
import os
import signal
import sys

import numpy as np

import spccl

DIM = 16
SAMPLES = 64


def shard(rank: int) -> tuple[np.ndarray, np.ndarray]:
    """Rank ``rank``'s data: the same on every process that asks."""
    rng = np.random.default_rng(1000 + rank)
    x = rng.standard_normal((SAMPLES, DIM))
    truth = np.linspace(-1.0, 1.0, DIM)
    y = x @ truth + 0.1 * rng.standard_normal(SAMPLES)
    return x, y


def gradient(w: np.ndarray, data: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    x, y = data
    return x.T @ (x @ w - y) / SAMPLES


def reference(steps: int, lr: float, world: int, fail_step: int, survivors: list[int]) -> np.ndarray:
    """The same training without spccl: every shard before fail_step, the survivors' after."""
    w = np.zeros(DIM)
    for step in range(steps):
        ranks = range(world) if step < fail_step else survivors
        w = w - lr * sum(gradient(w, shard(r)) for r in ranks) / len(ranks)
    return w


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--kill-rank", type=int, default=2)
    parser.add_argument("--kill-step", type=int, default=15)
    parser.add_argument("--timeout-ms", type=int, default=10000)
    args = parser.parse_args()

    comm = spccl.Comm.from_env(timeout_ms=args.timeout_ms)
    world, me = comm.size, comm.rank
    data = shard(me)
    w = np.zeros(DIM)
    fail_step, survivors = args.steps, list(range(world))
    w_before = w  # the parameters before the last step this rank finished
    step = 0
    while step < args.steps:
        if step == args.kill_step and me == args.kill_rank:
            os.kill(os.getpid(), signal.SIGKILL)
        try:
            total = comm.all_reduce(gradient(w, data))
        except (spccl.RemoteError, spccl.TimeoutError, spccl.RevokedError) as error:
            # Everyone stops using the old communicator, then the survivors
            # agree on who is gone and go on without them, from this step.
            print(f"rank {me}: step {step}: {type(error).__name__}: {error}", file=sys.stderr)
            comm.revoke()
            _, failed = comm.agree(1)
            survivors = [r for r in survivors if r not in failed]
            print(f"rank {me}: failed ranks {failed}; going on with {survivors}", file=sys.stderr)
            shrunk = comm.shrink(failed)
            comm.close()
            comm = shrunk
            # The failed all-reduce may have finished on some ranks: the
            # dead rank sent all it had, a slower survivor was still
            # receiving when it saw the abort. Those ranks are one step
            # ahead (none can be two: finishing step s + 1 needs every
            # rank's step s + 1 data). The survivors redo the earliest
            # failed step; a rank that finished it takes it back.
            redo = int(comm.all_reduce(np.array([step], dtype=np.int64), op="min")[0])
            assert step - redo in (0, 1), f"rank {me}: failed at step {step}, redo {redo}"
            if redo < step:
                w = w_before
                print(f"rank {me}: finished step {redo} with the old group; taking it back",
                      file=sys.stderr)
            step = fail_step = redo
            continue  # redo this step on the survivors
        w_before = w
        w = w - args.lr * total / comm.size
        step += 1

    expected = reference(args.steps, args.lr, world, fail_step, survivors)
    same = np.allclose(w, expected, rtol=1e-12, atol=1e-12)
    if comm.rank == 0:
        np.set_printoptions(precision=6, suppress=True)
        print(f"failure at step {fail_step}; survivors {survivors} (old ranks)")
        print(f"trained:   {w}")
        print(f"reference: {expected}")
        print(f"max |difference| {np.max(np.abs(w - expected)):.3g}: "
              f"{'the same' if same else 'DIFFERENT'}")
    comm.close()
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
