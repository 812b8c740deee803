#include "coll/device_all_reduce.h"

#include <string>
#include <vector>

#include "base/check.h"
#include "coll/device_exchange.h"
#include "coll/device_in_place_input.h"
#include "coll/partition.h"

namespace spccl {

namespace {

using device::CuDevicePtr;
using device::CuStream;

// Steps 1 and 2 of the schedule (device_all_reduce.h).
spcclResult_t runOnDevices(CollContext& ctx, const DeviceCall& call, const DeviceBuffers& buffers) {
  const int n = ctx.nranks(), me = ctx.rank();
  const size_t size = spcclTypeSize(call.datatype);
  CuStream stream = nullptr;
  std::vector<CuDevicePtr> sends(n), recvs(n);
  spcclResult_t result = buffers.stream(&stream);
  for (int r = 0; r < n && result == spcclSuccess; ++r) {
    result = buffers.send(r, &sends[r]);
    if (result == spcclSuccess) result = buffers.recv(r, &recvs[r]);
  }
  const ElementRange mine = evenBlock(call.count, n, me);
  if (result == spcclSuccess && mine.count > 0) {
    std::vector<CuDevicePtr> inputs(n);
    for (int r = 0; r < n; ++r) inputs[r] = sends[r] + mine.offset * size;
    result = reduceFromOwnInputCopy(call, n, me, buffers, stream, &inputs[me]);
    if (result == spcclSuccess)
      result = launchDeviceReduce(call.name, call.datatype, call.op, inputs,
                                  recvs[me] + mine.offset * size, mine.count, stream);
  }
  // Waited for even after a failed launch: an in-place copy may be queued.
  result = finishQueuedCopies(result, stream, call.name, "the reduction kernel");
  SPCCL_CHECK(deviceBarrier(ctx, call, "the reduction", result));
  for (int r = 0; r < n && result == spcclSuccess; ++r) {
    const ElementRange block = evenBlock(call.count, n, r);
    if (r == me) continue;
    const size_t offset = block.offset * size;
    const std::string what = "copying rank " + std::to_string(r) + "'s block";
    result = copyOnStream(recvs[me] + offset, recvs[r] + offset, block.count * size, stream,
                          call.name, what.c_str());
  }
  // Waited for even after a failed copy: the earlier ones are queued.
  result = finishQueuedCopies(result, stream, call.name, "copying the peers' blocks");
  return deviceBarrier(ctx, call, "the gather", result);
}

}  // namespace

spcclResult_t runDeviceAllReduce(CollContext& ctx, const DeviceAllReduceCall& call,
                                 device::PeerAllocations& peers, bool* onDevices) {
  static const DeviceSchedule kSchedule{/*peersReadRecv=*/true, runOnDevices};
  return runDeviceResident(ctx, call, peers, kSchedule, onDevices);
}

}  // namespace spccl
