// Grouped collectives of device buffers on the device-resident path
// (core/device_collective_call.h; docs/gpu.md, "Device-resident
// collectives", "In a group").
//
// A group's calls on a communicator run device-resident at spcclGroupEnd
// when the communicator joins (joinsDeviceAllReduce) and those calls are
// all collectives that run device-resident outside a group
// (runsDeviceResident: all-reduce, reduce-scatter, all-gather, broadcast,
// reduce, all-to-all, all-to-allv): no point-to-point operation, no other
// collective. They then run one after the other, in issue order, each
// through its schedule with its own agreement, exactly as the same calls
// made outside the group would (an in-place all-to-all through the
// communicator's scratch); on a stream each is enqueued in the stream's
// order. FSDP's group of a reduce-scatter and an all-gather is one such
// group, as is an MoE layer's all-to-all with an all-reduce.
//
// Why this rule: every rank of a correct program issues the same
// collectives in a group, so every rank decides alike from its own calls,
// without an extra round. A group that mixes in other calls stays staged
// as one unit (its point-to-point operations are posted before any
// collective runs, which a device call in the middle would break). A
// program whose ranks group different calls fails at the first one that
// differs: the device path's agreement frames carry a signature of their
// own, which a staged collective's frames do not match (collective
// mismatch), so it ends in an error, never a hang or mixed data.
#pragma once

#include <vector>

#include "coll/collective.h"
#include "spccl.h"

namespace spccl {

// One collective of a group, as the API recorded it (validated).
struct GroupedDeviceCall {
  CollArgs args;
  CollSignature signature;
  const char* name = "";  // the API function, for errors
  void* stream = nullptr;
};

// Whether a group whose calls on comm are these collectives and
// `pointToPoint` point-to-point operations runs device-resident.
bool groupRunsDeviceResident(spcclComm_t comm, const std::vector<CollType>& collectives,
                             size_t pointToPoint);

// Runs the group's collectives on comm (one stream for all of them,
// checked by the caller), in issue order. Their buffers are checked again
// first, per collective as outside a group (core/collective_buffers.h); a
// rank whose check fails withdraws from the group's first call, so its
// peers fail that call at once instead of waiting for it. Not
// finishCall'ed: the caller does.
spcclResult_t runDeviceResidentGroup(spcclComm_t comm, const std::vector<GroupedDeviceCall>& calls);

}  // namespace spccl
