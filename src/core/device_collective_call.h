// How an API call of a dense collective reaches its device-resident
// schedule (coll/device_all_reduce.h, coll/device_collectives.h), without
// staging.
//
// Whether a communicator's calls join is decided once, from what every
// rank sent at its creation, so that all ranks join the same calls: every
// rank on one host, the transport auto, shm or cuda_ipc,
// SPCCL_DEVICE_ALLREDUCE on (a job setting, checked at creation), and on
// every rank a current CUDA device, the driver and a libspccl with the
// kernels (RankInfo::deviceAllReduceReady), and every two ranks on
// different devices able to access each other's device as a peer
// (RankInfo::devicePeers; SPCCL_DEBUG=INFO says which pair could not). An
// all-reduce, reduce-scatter, all-gather, broadcast, reduce or all-to-all
// outside a group (blocking or its spcclI* form), or in a group of such
// blocking calls only but the all-to-all (core/device_group.h), of such a
// communicator then runs
// the schedule's agreement, on host buffers too:
// the ranks choose the device path only when every rank's buffers are
// device memory it can export, on the device it had at creation, and the
// CPU collective otherwise. A communicator created where some rank had no
// device (a CPU job, even one whose processes loaded the driver) never
// joins and runs as before.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "coll/collective.h"
#include "coll/device_call.h"
#include "core/bootstrap.h"
#include "core/staged_call.h"
#include "core/staging_profile.h"
#include "device/peer_allocations.h"
#include "spccl.h"

namespace spccl {

bool joinsDeviceAllReduce(spcclComm_t comm);

// Whether every rank's device reaches every other rank's (the same device,
// or peer access), from the rendezvous table; else *why names the first
// pair that does not.
bool devicesReachEachOther(const std::vector<RankInfo>& ranks, std::string* why);

// `staged` holds the call's buffers (added and validated, not prepared).
// Any collective for which runsDeviceResident (coll/device_collectives.h).
// With a request, a non-blocking call (spcclIallReduce, spcclIbroadcast,
// ...): queued, in issue order with the communicator's other work.
spcclResult_t runDeviceCollectiveCall(spcclComm_t comm, StagedCall& staged, const CollArgs& args,
                                      const CollSignature& signature, const char* name,
                                      spcclRequest_t* request = nullptr);

// The parts of runDeviceCollectiveCall that the migration calls built on
// the same schedules share (core/device_migrate_call.h).
//
// The DeviceCall of a dense collective's arguments, this rank's buffers as
// `staged` holds them. Where they are device memory, on this thread (the
// API caller's, with the buffers' context current) and before the call
// holds a stream: the kernel of a call that reduces loaded
// (prepareDeviceAllReduce), and the communicator's device scratch that
// the call's schedule takes reserved (reserveDeviceScratch: an in-place
// all-to-all(v), or an in-place reduction on a rank whose own input a
// later launch reads, rank >= 16). Every device call comes through here,
// the migration calls too (the merged all-reduce's args are its folded
// all-reduce in place). A failure of either is no error: the call falls
// back.
DeviceCall deviceCallOf(spcclComm_t comm, const StagedCall& staged, const CollArgs& args,
                        const char* name);

// The communicator's PeerAllocations (made on first use).
std::shared_ptr<device::PeerAllocations> devicePeersOf(spcclComm_t comm);

// What a device call runs on its context: the agreement, then the
// schedule or the fallback (*onDevices: which).
using DeviceCallBody =
    std::function<spcclResult_t(CollContext&, device::PeerAllocations&, bool* onDevices)>;

// body on a fresh context for `signature`, nothing staged
// (StagedCall::runDirect; with a request, queued); a call that took the
// device path is counted by recordResident in the staging report.
spcclResult_t runDeviceCall(spcclComm_t comm, StagedCall& staged, const CollSignature& signature,
                            DeviceCallBody body,
                            std::function<void(StagingProfile&)> recordResident,
                            spcclRequest_t* request);

}  // namespace spccl
