#include "coll/device_collectives.h"

#include <string>
#include <vector>

#include "base/check.h"
#include "coll/device_all_reduce.h"
#include "coll/device_all_to_all.h"
#include "coll/device_exchange.h"
#include "coll/device_in_place_input.h"
#include "coll/device_reduce_launch.h"
#include "coll/root_agreement.h"

namespace spccl {

namespace {

using device::CuDevicePtr;
using device::CuStream;

size_t countBytes(const DeviceCall& call) { return call.count * spcclTypeSize(call.datatype); }

// recv(me) = send(0)[at] op ... op send(n-1)[at] over call.count elements.
spcclResult_t reduceInto(CollContext& ctx, const DeviceCall& call, const DeviceBuffers& buffers,
                         size_t at, CuStream stream) {
  const int n = ctx.nranks();
  std::vector<CuDevicePtr> inputs(n);
  for (int r = 0; r < n; ++r) {
    SPCCL_CHECK(buffers.send(r, &inputs[r]));
    inputs[r] += at;
  }
  CuDevicePtr out = 0;
  SPCCL_CHECK(buffers.recv(ctx.rank(), &out));
  SPCCL_CHECK(reduceFromOwnInputCopy(call, n, ctx.rank(), buffers, stream, &inputs[ctx.rank()]));
  const spcclResult_t launched =
      launchDeviceReduce(call.name, call.datatype, call.op, inputs, out, call.count, stream);
  // Waited for even after a failed launch: an in-place copy may be queued.
  return finishQueuedCopies(launched, stream, call.name, "the reduction kernel");
}

spcclResult_t reduceScatter(CollContext& ctx, const DeviceCall& call,
                            const DeviceBuffers& buffers) {
  CuStream stream = nullptr;
  spcclResult_t result = buffers.stream(&stream);
  if (result == spcclSuccess)
    result =
        reduceInto(ctx, call, buffers, static_cast<size_t>(ctx.rank()) * countBytes(call), stream);
  return deviceBarrier(ctx, call, "the reduction", result);
}

spcclResult_t reduce(CollContext& ctx, const DeviceCall& call, const DeviceBuffers& buffers) {
  CuStream stream = nullptr;
  spcclResult_t result = spcclSuccess;
  if (ctx.rank() == call.root) {
    result = buffers.stream(&stream);
    if (result == spcclSuccess) result = reduceInto(ctx, call, buffers, 0, stream);
  }
  return deviceBarrier(ctx, call, "the reduction", result);
}

// Rank `from`'s sendbuff into this rank's recvbuff at byte `at`.
spcclResult_t copyFrom(const DeviceCall& call, const DeviceBuffers& buffers, int from, int me,
                       size_t at, CuStream stream) {
  CuDevicePtr source = 0, target = 0;
  SPCCL_CHECK(buffers.send(from, &source));
  SPCCL_CHECK(buffers.recv(me, &target));
  const std::string what = "copying rank " + std::to_string(from) + "'s sendbuff";
  return copyOnStream(target + at, source, countBytes(call), stream, call.name, what.c_str());
}

spcclResult_t allGather(CollContext& ctx, const DeviceCall& call, const DeviceBuffers& buffers) {
  const int n = ctx.nranks(), me = ctx.rank();
  CuStream stream = nullptr;
  spcclResult_t result = buffers.stream(&stream);
  // From rank me+1 on, so that the ranks do not all read rank 0 first.
  for (int k = 0; k < n && result == spcclSuccess; ++k) {
    const int from = (me + k) % n;
    result =
        copyFrom(call, buffers, from, me, static_cast<size_t>(from) * countBytes(call), stream);
  }
  // Waited for even after a failed copy: the earlier ones are queued.
  result = finishQueuedCopies(result, stream, call.name, "copying the peers' sendbuffs");
  return deviceBarrier(ctx, call, "the gather", result);
}

spcclResult_t broadcast(CollContext& ctx, const DeviceCall& call, const DeviceBuffers& buffers) {
  CuStream stream = nullptr;
  spcclResult_t result = buffers.stream(&stream);
  if (result == spcclSuccess) result = copyFrom(call, buffers, call.root, ctx.rank(), 0, stream);
  if (result == spcclSuccess)
    result = synchronizeDeviceStream(stream, call.name, "copying the root's sendbuff");
  return deviceBarrier(ctx, call, "the copy", result);
}

}  // namespace

bool runsDeviceResident(CollType type) {
  return type == CollType::AllReduce || type == CollType::ReduceScatter ||
         type == CollType::AllGather || type == CollType::Broadcast || type == CollType::Reduce ||
         type == CollType::AllToAll || type == CollType::AllToAllv;
}

spcclResult_t runDeviceCollective(CollContext& ctx, const DeviceCall& call,
                                  device::PeerAllocations& peers, bool* onDevices) {
  *onDevices = false;
  static const DeviceSchedule kReduceScatter{false, reduceScatter};
  static const DeviceSchedule kAllGather{false, allGather};
  static const DeviceSchedule kBroadcast{false, broadcast};
  static const DeviceSchedule kReduce{false, reduce};
  switch (call.type) {
    case CollType::AllReduce:
      return runDeviceAllReduce(ctx, call, peers, onDevices);
    case CollType::ReduceScatter:
      return runDeviceResident(ctx, call, peers, kReduceScatter, onDevices);
    case CollType::AllGather:
      return runDeviceResident(ctx, call, peers, kAllGather, onDevices);
    case CollType::Broadcast:
      SPCCL_CHECK(agreeOnRoot(ctx, RootedCallNames{call.name, call.rootArgument}));
      return runDeviceResident(ctx, call, peers, kBroadcast, onDevices);
    case CollType::Reduce:
      SPCCL_CHECK(agreeOnRoot(ctx, RootedCallNames{call.name, call.rootArgument}));
      return runDeviceResident(ctx, call, peers, kReduce, onDevices);
    case CollType::AllToAll:
      return runDeviceResident(ctx, call, peers, deviceAllToAllSchedule(), onDevices);
    case CollType::AllToAllv:
      return runDeviceResident(ctx, call, peers, deviceAllToAllvSchedule(), onDevices);
    default:
      return SPCCL_FAIL(spcclInternalError, "%s: no device-resident schedule for %s", call.name,
                        collTypeName(call.type));
  }
}

}  // namespace spccl
