#include "core/device_group.h"

#include <algorithm>
#include <memory>

#include "base/check.h"
#include "coll/device_collectives.h"
#include "core/collective_buffers.h"
#include "core/comm.h"
#include "core/device_collective_call.h"
#include "core/staged_call.h"

namespace spccl {

bool groupRunsDeviceResident(spcclComm_t comm, const std::vector<CollType>& collectives,
                             size_t pointToPoint) {
  if (pointToPoint > 0 || collectives.empty()) return false;
  return std::all_of(collectives.begin(), collectives.end(), runsDeviceResident) &&
         joinsDeviceAllReduce(comm);
}

spcclResult_t runDeviceResidentGroup(spcclComm_t comm,
                                     const std::vector<GroupedDeviceCall>& calls) {
  // Every call's buffers before any call runs: a rank that cannot run one
  // of them takes part in none, rather than leave its peers in a later
  // call until the deadline.
  std::vector<std::unique_ptr<StagedCall>> staged;
  for (const GroupedDeviceCall& call : calls) {
    auto one = std::make_unique<StagedCall>(comm, call.name, call.stream);
    spcclResult_t checked =
        addCollectiveBuffersOfOneKind(*one, call.args, comm->rank, comm->nranks);
    if (checked == spcclSuccess) checked = one->validate();
    if (checked != spcclSuccess) return rejectCall(comm, checked);
    staged.push_back(std::move(one));
  }
  // In issue order; the first failure ends the group on this rank, and
  // the schedule's barriers end it on the peers in the same call.
  for (size_t k = 0; k < calls.size(); ++k)
    SPCCL_CHECK(runDeviceCollectiveCall(comm, *staged[k], calls[k].args, calls[k].signature,
                                        calls[k].name));
  return spcclSuccess;
}

}  // namespace spccl
