// In-place reductions on the device path with more ranks than one launch
// of the reduction kernel takes (coll/device_reduce_launch.h: at most
// kMaxInputs inputs per launch, each launch after the first reading the
// output so far as its input 0, then the next inputs in rank order).
//
// In place, the output is this rank's own input: the first launch reads
// it before writing (element by element), but a later launch would read
// the partial result in its place. So a rank whose own input a later
// launch reads (rank >= kMaxInputs) first copies that input (its own
// block, and only that) to the communicator's device scratch
// (device/peer_readable_scratch.h) and reduces from the copy. The rank
// order and the launch grouping are unchanged, so the bits are those of
// the same call out of place. Ranks below kMaxInputs copy nothing.
//
// Why no synchronisation: the copy is queued on the schedule's stream
// before the launches, so stream order finishes it before the first
// launch writes the output; no peer writes this rank's buffers, and no
// peer reads this rank's own block (each reads its own block of every
// sendbuff), so nothing else is ordered against it. The scratch is this
// rank's alone in the call: the previous call that used it synchronised
// its stream before its closing barrier. A failure after the copy was
// queued still waits for the stream (finishQueuedCopies), since the copy
// reads the user's sendbuff and writes the scratch.
//
// The scratch is reserved on the API caller's thread
// (reserveDeviceScratch): cuMemAlloc may wait for the device. Where the
// reservation failed, the rank's offer is not usable and every rank
// falls back alike (device_exchange.cc, makeOffer).
#pragma once

#include <cstddef>
#include <optional>

#include "coll/device_call.h"
#include "coll/device_exchange.h"
#include "device/cuda_driver.h"

namespace spccl {

// The bytes of sendbuff (from sendbuff) that this rank's reduction both
// reads as its own input and writes, in the in-place form of its call
// (NCCL's): all-reduce recvbuff == sendbuff, its block of the count
// (evenBlock); reduce-scatter recvbuff == sendbuff + rank * count, that
// block; reduce, at the root, recvbuff == sendbuff, the whole count.
// nullopt where the call is not in that form: out of place, a reduce's
// non-root, a call that does not reduce, or buffers that overlap
// otherwise (those fall back, device_exchange.cc).
struct InPlaceBlock {
  size_t offset = 0, bytes = 0;
};
std::optional<InPlaceBlock> inPlaceOwnBlock(const DeviceCall& call, int nranks, int rank);

// The device scratch this rank needs for the call: its own block's bytes
// where a launch after the first reads it (readInFirstLaunch), else 0.
size_t inPlaceInputScratchBytes(const DeviceCall& call, int nranks, int rank);

// Where inPlaceInputScratchBytes is not 0: this rank's own input
// (*input, its block of sendbuff) copied to the scratch on `stream`, and
// *input pointing at the copy. Else nothing. inPlaceOwnBlock is the one
// source of the block: an *input other than sendbuff + its offset (a
// caller that computed its block otherwise) is an internal error naming
// the call, before anything is queued.
spcclResult_t reduceFromOwnInputCopy(const DeviceCall& call, int nranks, int rank,
                                     const DeviceBuffers& buffers, device::CuStream stream,
                                     device::CuDevicePtr* input);

}  // namespace spccl
