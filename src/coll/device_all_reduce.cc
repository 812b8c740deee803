#include "coll/device_all_reduce.h"

#include <unistd.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "base/check.h"
#include "coll/collective.h"
#include "coll/partition.h"
#include "coll/small_allgather.h"
#include "device/cuda_ipc.h"
#include "device/cuda_module.h"
#include "kernels/device_reduce/reduce_inputs.h"
#include "kernels/device_reduce/reduce_inputs_image.h"

namespace spccl {

namespace {

namespace dr = kernels::device_reduce;
using device::CuDevicePtr;
using device::CuStream;

const device::EmbeddedModule& reduceModule() {
  static const device::EmbeddedModule module(dr::reduceInputsImage(), dr::reduceInputsImageBytes());
  return module;
}

// This process, among those of one host: the pid (a forked child inherits
// the random part but not the pid) mixed with a random number drawn once
// (ranks in other pid namespaces may share a pid).
uint64_t processToken() {
  static const uint64_t random = [] {
    std::random_device device;
    return (static_cast<uint64_t>(device()) << 32) ^ device();
  }();
  return random ^ static_cast<uint64_t>(getpid());
}

// What each rank tells the others before the data moves.
struct Offer {
  int32_t usable = 0;    // this rank can take the device path
  int32_t failure = 0;   // spcclResult_t: this rank cannot run the call at all
  uint64_t process = 0;  // processToken(): ranks of one process use each other's pointers
  uint64_t device = 0;   // device::DeviceLocation of the buffers (usable only)
  uint64_t sendPointer = 0, recvPointer = 0;
  device::ExportedDeviceRange send{};
  device::ExportedDeviceRange recv{};
};

// The agreement's frames carry a signature no user call has, so a peer that
// runs the staged all-reduce instead (it did not join: another build, or no
// driver loaded) fails the call at the engine's signature check instead of
// mixing messages.
CollSignature offerSignature(const DeviceAllReduceCall& call) {
  return CollSignature{CollType::Internal, static_cast<uint8_t>(call.datatype),
                       static_cast<uint8_t>(call.op), -2, call.count};
}

template <typename T>
spcclResult_t allGather(CollContext& ctx, const T& mine, std::vector<T>* all) {
  all->assign(static_cast<size_t>(ctx.nranks()), T{});
  return allGatherSmall(ctx, &mine, sizeof(T), all->data());
}

// Every rank's part went well, or the call fails on every rank: the failing
// rank with its own error, the others naming it.
spcclResult_t barrier(CollContext& ctx, const char* name, const char* step, spcclResult_t mine) {
  // A failed rank keeps its own error, even when a peer that learnt of it
  // first aborted the exchange.
  const std::string why = mine != spcclSuccess ? threadLastError() : std::string();
  std::vector<int32_t> all;
  const spcclResult_t gathered = allGather(ctx, static_cast<int32_t>(mine), &all);
  if (mine != spcclSuccess) return failWith(mine, __FILE__, __LINE__, "%s", why.c_str());
  SPCCL_CHECK(gathered);
  for (size_t r = 0; r < all.size(); ++r)
    if (all[r] != spcclSuccess)
      return SPCCL_FAIL(spcclRemoteError,
                        "%s: rank %zu failed %s of the device-resident all-reduce", name, r, step);
  return spcclSuccess;
}

spcclResult_t synchronize(CuStream stream, const char* name, const char* what) {
  const device::CuResult result = device::cudaDriver()->streamSynchronize(stream);
  if (result != 0)
    return SPCCL_FAIL(spcclSystemError, "%s: %s: %s", name, what,
                      device::describeCuError("cuStreamSynchronize", result).c_str());
  return spcclSuccess;
}

// out = inputs[0] op ... op inputs[n-1] over count elements, in launches of
// at most kMaxInputs inputs, each after the first starting from out.
std::string kernelName(spcclDataType_t type, spcclRedOp_t op) {
  return std::string(dr::kKernelPrefix) + dr::typeSuffix(type) + "_" + dr::opSuffix(op);
}

spcclResult_t launchReduce(const DeviceAllReduceCall& call, const std::vector<CuDevicePtr>& inputs,
                           CuDevicePtr out, size_t count, CuStream stream) {
  const std::string kernel = kernelName(call.datatype, call.op);
  device::CuFunction function = nullptr;
  SPCCL_CHECK(reduceModule().function(kernel, &function));
  constexpr unsigned kThreads = 256;
  const size_t blocks = std::clamp<size_t>((count + kThreads - 1) / kThreads, 1, size_t{1} << 16);
  size_t next = 0;
  while (next < inputs.size()) {
    dr::ReduceInputsArgs args{};
    int k = 0;
    if (next > 0) args.inputs[k++] = out;
    while (k < dr::kMaxInputs && next < inputs.size()) args.inputs[k++] = inputs[next++];
    args.inputCount = k;
    args.output = out;
    args.count = count;
    args.divisor =
        next == inputs.size() && call.op == spcclAvg ? static_cast<int32_t>(inputs.size()) : 0;
    void* params[] = {&args};
    const device::CuResult result = device::cudaModuleDriver()->launchKernel(
        function, static_cast<unsigned>(blocks), 1, 1, kThreads, 1, 1, 0, stream, params, nullptr);
    if (result != 0)
      return SPCCL_FAIL(spcclSystemError, "%s: kernel %s: %s", call.name, kernel.c_str(),
                        device::describeCuError("cuLaunchKernel", result).c_str());
  }
  return spcclSuccess;
}

// This rank's offer: usable only with device buffers it can export, the
// kernels, and (in place with more ranks than one launch takes) no launch
// that would overwrite an input it still has to read.
Offer makeOffer(CollContext& ctx, const DeviceAllReduceCall& call,
                const device::PeerAllocations& peers, size_t bytes) {
  Offer offer;
  if (!call.device || !deviceAllReduceAvailable() || dr::typeSuffix(call.datatype) == nullptr ||
      dr::opSuffix(call.op) == nullptr)
    return offer;
  if (call.sendbuff == call.recvbuff && ctx.nranks() > dr::kMaxInputs) return offer;
  // Peer access was checked for the creation device only.
  if (peers.deviceLocation() == 0 || peers.deviceLocation() != call.creationDevice) return offer;
  // Loaded already by prepareDeviceAllReduce (a cached lookup here); a
  // module that does not load makes the call fall back.
  device::CuFunction function = nullptr;
  if (reduceModule().function(kernelName(call.datatype, call.op), &function) != spcclSuccess)
    return offer;
  // A buffer that cannot be exported (not from cuMemAlloc, e.g. managed
  // memory) is no error here: the call falls back. The message stays in
  // the thread's last error only.
  if (bytes == 0 ||
      device::exportDeviceRange(call.sendbuff, bytes, "sendbuff", &offer.send) != spcclSuccess ||
      device::exportDeviceRange(call.recvbuff, bytes, "recvbuff", &offer.recv) != spcclSuccess)
    return offer;
  offer.sendPointer = reinterpret_cast<uint64_t>(call.sendbuff);
  offer.recvPointer = reinterpret_cast<uint64_t>(call.recvbuff);
  offer.device = peers.deviceLocation();
  offer.usable = 1;
  return offer;
}

// Ranks of one process use each other's pointers as they are, and a
// kernel reads another device's memory only after cuCtxEnablePeerAccess
// (IPC handles enable it when opened), which spccl does not call: such
// ranks on different devices fall back.
bool oneProcessOnTwoDevices(const std::vector<Offer>& offers) {
  for (const Offer& a : offers)
    for (const Offer& b : offers)
      if (a.process == b.process && a.device != b.device) return true;
  return false;
}

// A peer's buffer at `range`, opened in this process; this rank's own is its pointer.
// A rank of this same process (threads, or several communicators): its
// pointer as it is (one address space; the driver refuses to open a
// process's own handle).
spcclResult_t peerPointer(device::PeerAllocations& peers, int rank, const Offer& offer,
                          const device::ExportedDeviceRange& range, uint64_t pointer,
                          CuDevicePtr* out) {
  if (offer.process == processToken()) {
    *out = pointer;
    return spcclSuccess;
  }
  CuDevicePtr base = 0;
  SPCCL_CHECK(peers.open(rank, range.handle, &base));
  *out = base + range.offset;
  return spcclSuccess;
}

// Steps 2 and 3 of the schedule (device_all_reduce.h).
spcclResult_t runOnDevices(CollContext& ctx, const DeviceAllReduceCall& call,
                           const std::vector<Offer>& offers, device::PeerAllocations& peers) {
  const int n = ctx.nranks(), me = ctx.rank();
  const size_t size = spcclTypeSize(call.datatype);
  CuStream stream = nullptr;
  std::vector<CuDevicePtr> sends(n), recvs(n);
  spcclResult_t result = peers.stream(&stream);
  for (int r = 0; r < n && result == spcclSuccess; ++r) {
    const Offer& o = offers[r];
    result = peerPointer(peers, r, o, o.send, o.sendPointer, &sends[r]);
    if (result == spcclSuccess) result = peerPointer(peers, r, o, o.recv, o.recvPointer, &recvs[r]);
  }
  const ElementRange mine = evenBlock(call.count, n, me);
  if (result == spcclSuccess && mine.count > 0) {
    std::vector<CuDevicePtr> inputs(n);
    for (int r = 0; r < n; ++r) inputs[r] = sends[r] + mine.offset * size;
    result = launchReduce(call, inputs, recvs[me] + mine.offset * size, mine.count, stream);
  }
  if (result == spcclSuccess) result = synchronize(stream, call.name, "the reduction kernel");
  SPCCL_CHECK(barrier(ctx, call.name, "the reduction", result));
  for (int r = 0; r < n && result == spcclSuccess; ++r) {
    const ElementRange block = evenBlock(call.count, n, r);
    if (r == me || block.count == 0) continue;
    const size_t offset = block.offset * size;
    const device::CuResult copied = device::cudaDriver()->memcpyAsync(
        recvs[me] + offset, recvs[r] + offset, block.count * size, stream);
    if (copied != 0)
      result = SPCCL_FAIL(spcclSystemError, "%s: copying rank %d's block: %s", call.name, r,
                          device::describeCuError("cuMemcpyAsync", copied).c_str());
  }
  if (result == spcclSuccess) result = synchronize(stream, call.name, "copying the peers' blocks");
  return barrier(ctx, call.name, "the gather", result);
}

// Some rank cannot take the device path: the CPU all-reduce, this rank's
// device buffers copied through host memory on the communicator's
// non-blocking stream (never the legacy stream, which would wait for the
// caller's stream that this call holds).
spcclResult_t runOnHost(CollContext& ctx, const DeviceAllReduceCall& call,
                        device::PeerAllocations& peers, size_t bytes) {
  CollArgs args;
  args.type = CollType::AllReduce;
  args.sendbuff = call.sendbuff;
  args.recvbuff = call.recvbuff;
  args.count = call.count;
  args.datatype = call.datatype;
  args.op = call.op;
  if (!call.device) return runDenseCollective(ctx, args, ctx.denseAlgorithm());
  std::vector<unsigned char> host(bytes);
  CuStream stream = nullptr;
  SPCCL_CHECK(peers.stream(&stream));
  auto copy = [&](CuDevicePtr to, CuDevicePtr from, const char* what) -> spcclResult_t {
    if (bytes == 0) return spcclSuccess;
    const device::CuResult result = device::cudaDriver()->memcpyAsync(to, from, bytes, stream);
    if (result != 0)
      return SPCCL_FAIL(spcclSystemError, "%s: %s: %s", call.name, what,
                        device::describeCuError("cuMemcpyAsync", result).c_str());
    return synchronize(stream, call.name, what);
  };
  const auto hostPointer = reinterpret_cast<CuDevicePtr>(host.data());
  SPCCL_CHECK(
      copy(hostPointer, reinterpret_cast<CuDevicePtr>(call.sendbuff), "copying sendbuff in"));
  args.sendbuff = host.data();
  args.recvbuff = host.data();
  SPCCL_CHECK(runDenseCollective(ctx, args, ctx.denseAlgorithm()));
  return copy(reinterpret_cast<CuDevicePtr>(call.recvbuff), hostPointer, "copying recvbuff out");
}

}  // namespace

spcclResult_t prepareDeviceAllReduce(spcclDataType_t datatype, spcclRedOp_t op) {
  if (dr::typeSuffix(datatype) == nullptr || dr::opSuffix(op) == nullptr)
    return SPCCL_FAIL(spcclInvalidArgument, "no device-resident kernel for type %d, op %d",
                      static_cast<int>(datatype), static_cast<int>(op));
  device::CuFunction function = nullptr;
  return reduceModule().function(kernelName(datatype, op), &function);
}

bool deviceAllReduceAvailable() {
  // The driver as the call's memory-kind checks found it: no new lookup
  // per call where none is loaded (cuda_driver.h).
  return reduceModule().present() && device::cudaDriverFoundSoFar() != nullptr &&
         device::cudaModuleDriver() != nullptr && device::cudaIpcDriver() != nullptr;
}

spcclResult_t runDeviceAllReduce(CollContext& ctx, const DeviceAllReduceCall& call,
                                 device::PeerAllocations& peers, bool* onDevices) {
  *onDevices = false;
  const size_t bytes = call.count * spcclTypeSize(call.datatype);
  // A failure here still takes part in the agreement, so that every rank
  // ends the call at once instead of waiting for this one.
  const spcclResult_t bound = call.device ? peers.bindContext(call.name) : spcclSuccess;
  Offer mine = bound == spcclSuccess ? makeOffer(ctx, call, peers, bytes) : Offer{};
  mine.failure = bound;
  mine.process = processToken();
  const std::string why = bound != spcclSuccess ? threadLastError() : std::string();
  std::vector<Offer> offers;
  spcclResult_t gathered = spcclSuccess;
  {
    CollContext agreement(ctx, offerSignature(call));
    gathered = allGather(agreement, mine, &offers);
  }
  if (bound != spcclSuccess) return failWith(bound, __FILE__, __LINE__, "%s", why.c_str());
  SPCCL_CHECK(gathered);
  for (size_t r = 0; r < offers.size(); ++r)
    if (offers[r].failure != spcclSuccess)
      return SPCCL_FAIL(spcclRemoteError, "%s: rank %zu cannot run the call (its error names why)",
                        call.name, r);
  const bool everyRank =
      std::all_of(offers.begin(), offers.end(), [](const Offer& o) { return o.usable != 0; });
  if (!everyRank || oneProcessOnTwoDevices(offers)) return runOnHost(ctx, call, peers, bytes);
  ctx.noteChoice("device_ipc", "every rank on one host with device buffers and CUDA IPC");
  *onDevices = true;
  return runOnDevices(ctx, call, offers, peers);
}

}  // namespace spccl
