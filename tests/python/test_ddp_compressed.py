"""DDP on the example model (examples/ddp_embedding.py) with spccl's
compressed_allreduce_hook, against DDP's default gloo all-reduce.

Each rank trains both models in lockstep on the same batches from the same
initial weights, so the comparison is local:

- at the first step (same weights, same batch) every averaged gradient is
  within the hook's error bound of gloo's: h·(2 + h) (two-shot) or
  (1 + h)^n − 1 (ring) times the largest |gradient| on any rank, since
  A_b / n ≤ the largest block scale of any rank (docs/compressed.md; the
  hook's docstring);
- over the 50 steps the loss stays finite and within a margin of gloo's
  (see test_compressed_hook_trains_close_to_gloo), and the error-feedback
  residual is non-zero and changes from step to step.
"""
from __future__ import annotations

import math

import pytest
import torch
import torch.distributed as dist

import spccl
import spccl.torch.hooks
from compression_bound import STEP_FRACTION, schedule_factor
from example_model import baseline_and_hooked, ddp_embedding as ex

pytestmark = pytest.mark.ddp


def make_models(comm, **options):
    """(args, corpus, gloo DDP, compressed DDP, its state, the hook's comm)."""
    return baseline_and_hooked(comm, "compressed", **options)


def step(model, optimizer, features, labels) -> float:
    optimizer.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(features), labels)
    loss.backward()
    optimizer.step()
    return loss.item()


def largest_local_gradient(args, classes, features, labels) -> float:
    """max |gradient| of the model on this batch without DDP, maximised over ranks."""
    local = ex.make_model(args, classes)
    torch.nn.functional.cross_entropy(local(features), labels).backward()
    largest = torch.tensor(max(p.grad.abs().max().item() for p in local.parameters()))
    dist.all_reduce(largest, op=dist.ReduceOp.MAX)
    return largest.item()


@pytest.mark.parametrize("codec,bits,schedule", [("piecewise", 4, "two_shot"),
                                                 ("linear", 8, "two_shot"),
                                                 ("piecewise", 2, "ring")])
def test_first_step_gradients_within_the_bound(comm, torch_dist, codec, bits, schedule):
    args, corpus, baseline, compressed, state, hook_comm = make_models(
        comm, codec=codec, bits=bits, schedule=schedule)
    features, labels = corpus.batch(args.batch, torch.Generator().manual_seed(7 + dist.get_rank()))
    for model in (baseline, compressed):
        torch.nn.functional.cross_entropy(model(features), labels).backward()
    largest = largest_local_gradient(args, len(corpus.names), features, labels)
    factor = schedule_factor(STEP_FRACTION[(codec, bits)], schedule, dist.get_world_size())
    bound = (factor + 1e-5) * largest  # + float32 rounding of both averages
    worst = 0.0
    for (name, exact), approximate in zip(baseline.module.named_parameters(),
                                          compressed.module.parameters()):
        error = (approximate.grad - exact.grad).abs().max().item()
        assert error <= bound, f"{name}: gradient off by {error:.3g} > bound {bound:.3g}"
        worst = max(worst, error)
    assert worst > 0, "the gradients went through uncompressed"
    state.close()
    hook_comm.close()


def test_compressed_hook_trains_close_to_gloo(comm, torch_dist):
    """Default hook: piecewise 4-bit two-shot with error feedback.

    Margin: each step's averaged gradient is off by at most ε = h·(2 + h)
    (0.36 at 4 bits) of the largest gradient entry (the test above), i.e.
    the compressed run makes its progress with gradients accurate to a
    fraction ε. We allow the mean of its last 10 losses to differ from
    gloo's by ε times the progress gloo made over the run (its first loss
    minus the mean of its last 10). This reads the bound heuristically —
    no theorem bounds a trajectory — and is loose on purpose: measured on
    4 ranks, 0.002 against a margin of ≈ 0.03."""
    args, corpus, baseline, compressed, state, hook_comm = make_models(comm)
    models = (baseline, compressed)
    optimizers = [torch.optim.SGD(m.parameters(), lr=args.lr, momentum=0.9) for m in models]
    generator = torch.Generator().manual_seed(1000 + dist.get_rank())  # each rank its own data
    losses = []
    residuals = []  # bucket 0's residual after each step
    for _ in range(args.steps):
        features, labels = corpus.batch(args.batch, generator)
        losses.append([step(m, o, features, labels) for m, o in zip(models, optimizers)])
        residuals.append(state.residual(0).clone())
    gloo, ours = [column for column in zip(*losses)]
    assert all(math.isfinite(loss) for loss in ours)
    assert gloo[0] == ours[0]  # the same model before any update
    last_gloo, last_ours = sum(gloo[-10:]) / 10, sum(ours[-10:]) / 10
    h = STEP_FRACTION[("piecewise", 4)]
    margin = schedule_factor(h, "two_shot", comm.size) * (gloo[0] - last_gloo)
    assert last_gloo < gloo[0], "the baseline did not learn: the margin would be meaningless"
    assert abs(last_ours - last_gloo) <= margin, (last_ours, last_gloo, margin)
    assert last_ours < ours[0], "the compressed run did not learn"
    # Error feedback: every bucket's residual is in use, and moves.
    buckets = state.buckets_reduced // args.steps
    assert buckets >= 1 and state.buckets_reduced == buckets * args.steps
    for i in range(buckets):
        assert state.residual(i).abs().max() > 0, i
    assert all(not torch.equal(a, b) for a, b in zip(residuals, residuals[1:]))
    state.close()
    hook_comm.close()


def test_without_error_feedback_no_residual(comm, torch_dist):
    args, corpus, _, compressed, state, hook_comm = make_models(comm, error_feedback=False)
    optimizer = torch.optim.SGD(compressed.parameters(), lr=args.lr)
    features, labels = corpus.batch(args.batch, torch.Generator().manual_seed(3))
    assert math.isfinite(step(compressed, optimizer, features, labels))
    assert state.buckets_reduced >= 1 and state.residual(0) is None
    state.close()
    hook_comm.close()


def test_hook_state_and_bucket_errors(comm, torch_dist):
    with pytest.raises(spccl.InvalidArgumentError, match=r"bits: 9 is outside 2\.\.8"):
        spccl.torch.hooks.CompressedAllReduceState(comm, bits=9)
    with pytest.raises(spccl.InvalidArgumentError, match="schedule 'tree' is not one of"):
        spccl.torch.hooks.CompressedAllReduceState(comm, schedule="tree")
    # A float64 model's bucket cannot be compressed: the error reaches backward.
    torch.set_num_threads(1)
    hook_comm = comm.split(0)
    model, state = ex.wrap(torch.nn.Linear(4, 2).double(), "compressed", hook_comm)
    with pytest.raises(RuntimeError, match="x: dtype torch.float64 is not supported"):
        model(torch.ones(3, 4, dtype=torch.float64)).sum().backward()
    state.close()
    hook_comm.close()
