"""What every spccl DDP hook's state shares: the communicator, and where a
bucket is reduced — in the hook itself, or on one worker thread in bucket
order so that backward computes the next buckets meanwhile (as DDP's own
all-reduce does). Subclasses say how a bucket is reduced."""
import concurrent.futures
from typing import Any, Dict, Optional

import torch
import torch.distributed as dist

from .._comm import Comm


class HookState:
    """Base of the hook states (like PowerSGD's state object).

    comm: the communicator, over the same ranks as the DDP process group
      and in the same order. With ``asynchronous`` (the default) it is used
      from the state's worker thread while backward runs, so nothing else
      may use it during a backward pass: give the hook a communicator of
      its own (e.g. ``comm.split(0)``).
    asynchronous: communicate on one worker thread, in bucket order; False
      runs each bucket in the hook itself.
    """

    def __init__(self, comm: Comm, asynchronous: bool) -> None:
        self.comm = comm
        self.buckets_reduced = 0
        self._worker: Optional[concurrent.futures.ThreadPoolExecutor] = None
        if asynchronous:
            self._worker = concurrent.futures.ThreadPoolExecutor(
                max_workers=1, thread_name_prefix="spccl-ddp-hook")

    def reduce_bucket(self, index: int, tensor: torch.Tensor) -> None:
        """Averages tensor (bucket index's flat gradients) over the ranks, in place."""
        raise NotImplementedError

    def run(self, bucket: dist.GradBucket) -> torch.futures.Future:
        """The hook's future for bucket; an error in the reduction is set on
        it, and DDP re-raises it from backward."""
        index, tensor = bucket.index(), bucket.buffer()
        future: torch.futures.Future = torch.futures.Future()

        def reduce() -> None:
            try:
                self.reduce_bucket(index, tensor)
                self.buckets_reduced += 1
                future.set_result(tensor)
            except BaseException as error:  # noqa: B036 - DDP re-raises it from the future
                future.set_exception(error)

        if self._worker is None:
            reduce()
        else:
            self._worker.submit(reduce)
        return future

    def close(self) -> None:
        """Stops the worker thread (pending buckets finish first)."""
        if self._worker is not None:
            self._worker.shutdown(wait=True)
            self._worker = None

    # The executor cannot be pickled; DDP pickles hook states only when
    # asked to (e.g. torch.save of the module), and the copy then reduces
    # in the hook itself.
    def __getstate__(self) -> Dict[str, Any]:
        state = dict(self.__dict__)
        state["_worker"] = None
        return state
