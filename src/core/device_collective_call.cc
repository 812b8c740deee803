#include "core/device_collective_call.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/knobs.h"
#include "base/log.h"
#include "coll/device_all_reduce.h"
#include "coll/device_collectives.h"
#include "coll/device_exchange.h"
#include "core/comm.h"
#include "device/peer_allocations.h"
#include "runtime/coll_context.h"

namespace spccl {

namespace {

// From what every rank sent at creation (RankInfo), so that every rank
// decides alike, once per communicator.
bool jobJoins(const spcclComm& comm) {
  if (comm.ranks.empty() || comm.ranks[0].job.deviceAllReduce == 0) return false;
  const std::string& transport = comm.options.transport;
  if (transport != "auto" && transport != "shm" && transport != "cuda_ipc") return false;
  for (const RankInfo& info : comm.ranks)
    if (info.hostId != comm.ranks[0].hostId || info.deviceAllReduceReady != 1) return false;
  std::string why;
  if (!devicesReachEachOther(comm.ranks, &why)) {
    SPCCL_INFO(kLogInit,
               "rank %d: no device-resident all-reduce on this communicator (all-reduces of "
               "device buffers are staged): %s",
               comm.rank, why.c_str());
    return false;
  }
  return true;
}

}  // namespace

bool devicesReachEachOther(const std::vector<RankInfo>& ranks, std::string* why) {
  for (size_t a = 0; a < ranks.size(); ++a)
    for (size_t b = 0; b < ranks.size(); ++b) {
      const device::DevicePeerAccess& from = ranks[a].devicePeers;
      const device::DevicePeerAccess& to = ranks[b].devicePeers;
      if (a == b || device::reaches(from, to)) continue;
      if (from.self == to.self && from.self != 0)
        *why = "ranks " + std::to_string(a) + " and " + std::to_string(b) +
               " are on two devices at one PCI location " + device::describeLocation(from.self) +
               " (MIG instances of one GPU: no CUDA IPC between them)";
      else
        *why = "rank " + std::to_string(a) + " (device " + device::describeLocation(from.self) +
               ") cannot access rank " + std::to_string(b) + "'s device " +
               device::describeLocation(to.self) + " as a peer (cuDeviceCanAccessPeer)";
      return false;
    }
  return true;
}

bool joinsDeviceAllReduce(spcclComm_t comm) {
  if (comm->deviceAllReduceJoins < 0) comm->deviceAllReduceJoins = jobJoins(*comm) ? 1 : 0;
  return comm->deviceAllReduceJoins == 1;
}

DeviceCall deviceCallOf(spcclComm_t comm, const StagedCall& staged, const CollArgs& args,
                        const char* name) {
  DeviceCall call;
  call.name = name;
  call.type = args.type;
  call.root = args.root;
  call.sendbuff = args.sendbuff;
  call.recvbuff = args.recvbuff;
  call.count = args.count;
  call.datatype = args.datatype;
  call.op = args.op;
  call.device = staged.hasDeviceMemory();
  if (args.type == CollType::AllToAllv) {
    const size_t n = static_cast<size_t>(comm->nranks);
    call.sendcounts.assign(args.sendcounts, args.sendcounts + n);
    call.sdispls.assign(args.sdispls, args.sdispls + n);
    call.recvcounts.assign(args.recvcounts, args.recvcounts + n);
    call.rdispls.assign(args.rdispls, args.rdispls + n);
  }
  call.creationDevice = comm->cudaDevicePeers.self;
  if (!call.device) return call;
  device::ScopedCudaContext current(staged.context());
  const bool reduces = args.type == CollType::AllReduce || args.type == CollType::ReduceScatter ||
                       args.type == CollType::Reduce;
  if (reduces) (void)prepareDeviceAllReduce(call.datatype, call.op);  // a failure falls back
  // Here, not in the held body (see reserveDeviceScratch). A failure is
  // no error: the body finds no scratch and the call falls back.
  (void)reserveDeviceScratch(call, comm->nranks, comm->rank, *devicePeersOf(comm));
  return call;
}

std::shared_ptr<device::PeerAllocations> devicePeersOf(spcclComm_t comm) {
  if (!comm->devicePeers) comm->devicePeers = std::make_shared<device::PeerAllocations>();
  return comm->devicePeers;
}

spcclResult_t runDeviceCall(spcclComm_t comm, StagedCall& staged, const CollSignature& signature,
                            DeviceCallBody body,
                            std::function<void(StagingProfile&)> recordResident,
                            spcclRequest_t* request) {
  auto run = [comm, signature, body = std::move(body), recordResident = std::move(recordResident),
              peers = devicePeersOf(comm)] {
    bool onDevices = false;
    const spcclResult_t result = spccl::runCollective(
        *comm->engine, signature, [&](CollContext& ctx) { return body(ctx, *peers, &onDevices); });
    if (onDevices && result == spcclSuccess) recordResident(*comm->stagingProfile);
    return result;
  };
  return request != nullptr ? staged.runDirectQueued(std::move(run), request)
                            : staged.runDirect(std::move(run));
}

spcclResult_t runDeviceCollectiveCall(spcclComm_t comm, StagedCall& staged, const CollArgs& args,
                                      const CollSignature& signature, const char* name,
                                      spcclRequest_t* request) {
  const DeviceCall call = deviceCallOf(comm, staged, args, name);
  return runDeviceCall(
      comm, staged, signature,
      [call](CollContext& ctx, device::PeerAllocations& peers, bool* onDevices) {
        return runDeviceCollective(ctx, call, peers, onDevices);
      },
      [type = call.type](StagingProfile& profile) { profile.recordDeviceResident(type); }, request);
}

}  // namespace spccl
