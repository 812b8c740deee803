"""DDP on the example model (examples/ddp_embedding.py), 50 steps: with
spccl's sparse_allreduce_hook the parameters equal those of DDP's default
gloo all-reduce, to float tolerance, after every step.

Each rank trains both models in lockstep on the same batches from the same
initial weights, so the comparison is local. A hook that skipped or
mis-scaled any bucket would leave this rank's parameters off the averaged
ones at the first step.
"""
from __future__ import annotations

import pytest
import torch
import torch.distributed as dist

import spccl
from example_model import baseline_and_hooked, ddp_embedding as ex

pytestmark = pytest.mark.ddp


def test_sparse_hook_matches_gloo_at_every_step(comm, torch_dist):
    args, corpus, baseline, sparse, state, hook_comm = baseline_and_hooked(comm, "sparse")
    models = (baseline, sparse)
    optimizers = [torch.optim.SGD(m.parameters(), lr=args.lr, momentum=0.9) for m in models]
    generator = torch.Generator().manual_seed(1000 + dist.get_rank())  # each rank its own data
    first_losses, last_losses = None, None
    for step in range(args.steps):
        features, labels = corpus.batch(args.batch, generator)
        losses = []
        for model, optimizer in zip(models, optimizers):
            optimizer.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(features), labels)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        for (name, a), b in zip(baseline.module.named_parameters(), sparse.module.parameters()):
            torch.testing.assert_close(b, a, rtol=1e-5, atol=1e-6,
                                       msg=lambda m: f"step {step}, parameter {name}: {m}")
        assert losses[1] == pytest.approx(losses[0], rel=1e-5, abs=1e-6), step
        first_losses = first_losses or losses
        last_losses = losses
    buckets = state.buckets_reduced // args.steps
    assert buckets >= 1 and state.buckets_reduced == buckets * args.steps
    # The embedding's bucket travelled sparse: the planner saw its density.
    densities = [state.stats(i).density for i in range(buckets)]
    assert min(densities) < 0.2, densities
    state.close()
    hook_comm.close()


def test_hook_errors_reach_backward(comm, torch_dist):
    """A failing spccl call inside the hook surfaces from backward, not a hang."""
    torch.set_num_threads(1)
    hook_comm = comm.split(0)
    model, state = ex.wrap(torch.nn.Linear(4, 2), "sparse", hook_comm)
    hook_comm.close()  # every call of the hook now fails
    with pytest.raises(RuntimeError, match="closed"):
        model(torch.ones(3, 4)).sum().backward()
    state.close()
