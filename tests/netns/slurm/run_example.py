#!/usr/bin/python3
"""Runs a torch.distributed example (argv[1], its arguments after it) and
ends the process with os._exit(0) as soon as the example has called
torch.distributed.destroy_process_group(), its last call.

Why: with torch 1.13 (Debian's python3-torch) the example can hang after
its last line. When main() returns, its DistributedDataParallel object is
freed with the GIL held; that drops the last reference to the Gloo process
group, whose destructor joins its worker threads, while a worker is still
freeing the tensor of the last finished all-reduce, whose Python object
needs the GIL: a deadlock (gdb: the main thread in ~ProcessGroupGloo ->
std::thread::join, the worker in ProcessGroupGloo::runLoop ->
~TensorImpl -> PyEval_AcquireThread). It is a race, so load makes it
likely: under srun on the 2-core test box 4 runs out of 4 with the gloo
hook hung. Nothing is left to do by then: every result has been printed.
"""
import os
import runpy
import sys

import torch.distributed as dist

_destroy = dist.destroy_process_group


def _destroy_and_exit(*args, **kwargs):
    _destroy(*args, **kwargs)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


dist.destroy_process_group = _destroy_and_exit
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
