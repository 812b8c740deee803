#include "migrate/device_merged_all_reduce.h"

#include <vector>

#include "base/check.h"
#include "coll/device_all_reduce.h"
#include "coll/device_exchange.h"
#include "coll/device_reduce_launch.h"

namespace spccl::migrate {

namespace {

using device::CuDevicePtr;
using device::CuStream;

// Step 1 on the device: the copies around the migrated range, then
// sendbuff op migrated into it (one launch of two inputs). The stream is
// synchronised even where a step failed: the copies enqueued before it
// read and write the user's buffers, which are the user's again once the
// call returns.
spcclResult_t foldOnDevice(const DeviceMergedAllReduce& call, device::PeerAllocations& peers) {
  const DeviceCall& c = call.allReduce;
  SPCCL_CHECK(peers.bindContext(c.name));
  CuStream stream = nullptr;
  SPCCL_CHECK(peers.stream(&stream));
  const size_t size = spcclTypeSize(c.datatype);
  const size_t begin = call.migrated.offset * size;
  const size_t end = begin + call.migrated.count * size;
  const auto in = reinterpret_cast<CuDevicePtr>(call.sendbuff);
  const auto out = reinterpret_cast<CuDevicePtr>(c.recvbuff);
  const char* what = "copying sendbuff to recvbuff";
  spcclResult_t result = copyOnStream(out, in, begin, stream, c.name, what);
  if (result == spcclSuccess)
    result = copyOnStream(out + end, in + end, c.count * size - end, stream, c.name, what);
  if (result == spcclSuccess && call.migrated.count > 0) {
    const std::vector<CuDevicePtr> inputs = {in + begin,
                                             reinterpret_cast<CuDevicePtr>(call.migrated.data)};
    result = launchDeviceReduce(c.name, c.datatype, foldOp(c.op), inputs, out + begin,
                                call.migrated.count, stream);
  }
  const spcclResult_t synchronized =
      synchronizeDeviceStream(stream, c.name, "folding migrated into the contribution");
  return result != spcclSuccess ? result : synchronized;
}

}  // namespace

spcclResult_t deviceMergedAllReduce(CollContext& ctx, const DeviceMergedAllReduce& call,
                                    device::PeerAllocations& peers, bool* onDevices) {
  *onDevices = false;
  const DeviceCall& c = call.allReduce;
  spcclResult_t folded = spcclSuccess;
  if (c.device)
    folded = foldOnDevice(call, peers);
  else
    foldMigratedPart(ctx.kernels(), call.sendbuff, c.recvbuff, c.count, call.migrated, c.datatype,
                     c.op);
  SPCCL_CHECK(deviceBarrier(ctx, c, "the fold of migrated", folded));
  return runDeviceAllReduce(ctx, c, peers, onDevices);
}

}  // namespace spccl::migrate
