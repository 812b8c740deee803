#include "coll/device_all_to_all.h"

#include <string>

#include "base/check.h"

namespace spccl {

namespace {

using device::CuDevicePtr;
using device::CuStream;

spcclResult_t copyBlocks(CollContext& ctx, const DeviceCall& call, const DeviceBuffers& buffers,
                         CuStream stream) {
  const int n = ctx.nranks(), me = ctx.rank();
  const size_t block = call.count * spcclTypeSize(call.datatype);
  CuDevicePtr target = 0;
  SPCCL_CHECK(buffers.recv(me, &target));
  // From rank me+1 on, so that the ranks do not all read rank 0 first.
  for (int k = 1; k <= n; ++k) {
    const int from = (me + k) % n;
    CuDevicePtr source = 0;
    SPCCL_CHECK(buffers.send(from, &source));
    const std::string what = "copying block " + std::to_string(me) + " of rank " +
                             std::to_string(from) + "'s sendbuff";
    SPCCL_CHECK(copyOnStream(target + static_cast<size_t>(from) * block,
                             source + static_cast<size_t>(me) * block, block, stream, call.name,
                             what.c_str()));
  }
  return synchronizeDeviceStream(stream, call.name, "copying the peers' blocks");
}

spcclResult_t allToAll(CollContext& ctx, const DeviceCall& call, const DeviceBuffers& buffers) {
  CuStream stream = nullptr;
  spcclResult_t result = buffers.stream(&stream);
  if (result == spcclSuccess) result = copyBlocks(ctx, call, buffers, stream);
  return deviceBarrier(ctx, call, "the exchange", result);
}

}  // namespace

const DeviceSchedule& deviceAllToAllSchedule() {
  static const DeviceSchedule kAllToAll{false, allToAll};
  return kAllToAll;
}

}  // namespace spccl
