#include "migrate/device_scatter_gather.h"

#include <string>

#include "base/check.h"
#include "coll/device_exchange.h"
#include "coll/root_agreement.h"
#include "migrate/migration_schedules.h"

namespace spccl::migrate {

namespace {

using device::CuDevicePtr;
using device::CuStream;

size_t blockBytes(const DeviceCall& call) { return call.count * spcclTypeSize(call.datatype); }

// Rank `from`'s sendbuff at byte `fromAt` into this rank's recvbuff at
// byte `toAt`, one block.
spcclResult_t copyBlock(const DeviceCall& call, const DeviceBuffers& buffers, int from,
                        size_t fromAt, int me, size_t toAt, CuStream stream) {
  CuDevicePtr source = 0, target = 0;
  SPCCL_CHECK(buffers.send(from, &source));
  SPCCL_CHECK(buffers.recv(me, &target));
  const std::string what = "copying a block of rank " + std::to_string(from) + "'s sendbuff";
  return copyOnStream(target + toAt, source + fromAt, blockBytes(call), stream, call.name,
                      what.c_str());
}

spcclResult_t scatter(CollContext& ctx, const DeviceCall& call, const DeviceBuffers& buffers) {
  const int me = ctx.rank();
  CuStream stream = nullptr;
  spcclResult_t result = buffers.stream(&stream);
  if (result == spcclSuccess)
    result = copyBlock(call, buffers, call.root, static_cast<size_t>(me) * blockBytes(call), me, 0,
                       stream);
  if (result == spcclSuccess)
    result = synchronizeDeviceStream(stream, call.name, "copying the root's block");
  return deviceBarrier(ctx, call, "the copy", result);
}

spcclResult_t gather(CollContext& ctx, const DeviceCall& call, const DeviceBuffers& buffers) {
  const int n = ctx.nranks(), me = ctx.rank();
  spcclResult_t result = spcclSuccess;
  if (me == call.root) {
    CuStream stream = nullptr;
    result = buffers.stream(&stream);
    for (int r = 0; r < n && result == spcclSuccess; ++r)
      result =
          copyBlock(call, buffers, r, 0, me, static_cast<size_t>(r) * blockBytes(call), stream);
    // Waited for even after a failed copy: the earlier ones write the
    // user's buffer.
    result = finishQueuedCopies(result, stream, call.name, "copying the ranks' blocks");
  }
  return deviceBarrier(ctx, call, "the gather", result);
}

// The staged calls' schedules, for the fallback.
spcclResult_t scatterOnCpu(CollContext& ctx, const CollArgs& args) {
  return linearScatter(ctx, args.sendbuff, args.recvbuff, args.count, args.datatype, args.root);
}

spcclResult_t gatherOnCpu(CollContext& ctx, const CollArgs& args) {
  return linearGather(ctx, args.sendbuff, args.recvbuff, args.count, args.datatype, args.root);
}

}  // namespace

spcclResult_t deviceScatterGather(CollContext& ctx, DeviceCall call, bool rootSends,
                                  device::PeerAllocations& peers, bool* onDevices) {
  *onDevices = false;
  SPCCL_CHECK(agreeOnRoot(ctx, RootedCallNames{call.name, call.rootArgument}));
  const size_t block = blockBytes(call);
  const size_t all = block * static_cast<size_t>(ctx.nranks());
  const size_t atRoot = ctx.rank() == call.root ? all : 0;
  call.sendBytes = rootSends ? atRoot : block;
  call.recvBytes = rootSends ? block : atRoot;
  call.hostRun = rootSends ? scatterOnCpu : gatherOnCpu;
  static const DeviceSchedule kScatter{false, scatter};
  static const DeviceSchedule kGather{false, gather};
  return runDeviceResident(ctx, call, peers, rootSends ? kScatter : kGather, onDevices);
}

}  // namespace spccl::migrate
