// Entry points of NCCL's device API (nccl_device/*.h, NCCL 2.28 on): the
// host functions that create device communicators and size their
// resources for kernels that talk to peers' memory directly (symmetric
// memory). Forward mode hands them to the real NCCL, with the real
// communicator; replace mode has no device communicators and says so
// (ncclInvalidUsage), instead of a program's NCCL getting spccl's handle.
#include "comm_entry.h"
#include "entry_guard.h"
#include "interposed_comm.h"
#include "profiling_alias.h"
#include "real_nccl.h"

#if SPCCL_NCCL_HAS_DEVICE_API

using namespace spccl::nccl;

namespace {

// Replace mode's answer for a call that needs a device communicator.
ncclResult_t notServed(InterposedComm* comm, const char* call) {
  return fail(comm, ncclInvalidUsage,
              "%s: NCCL's device API (device communicators, symmetric memory) is not served in "
              "SPCCL_NCCL_MODE=replace; use SPCCL_NCCL_MODE=forward",
              call);
}

// Where a Team API call on comm goes: the real NCCL (forward mode, or a
// call from inside it) with the real communicator, or spccl's answer from
// the communicator's rank and size (replace mode).
struct TeamSource {
  bool forward = false;
  ncclComm_t real = nullptr;
  bool known = false;  // replace mode, comm is spccl's
  int rank = 0;
  int nranks = 0;
};

TeamSource teamSource(ncclComm_t comm, const char* call) {
  TeamSource source;
  if (insideRealNccl()) {
    source.forward = true;
    source.real = comm;
    return source;
  }
  const CommLease lease = leaseComm(comm);
  if (lease.get() == nullptr) {
    source.forward = forwarding();
    source.real = comm;
    if (!source.forward)
      fail(nullptr, ncclInvalidArgument, "%s: comm %p is %s", call, static_cast<void*>(comm),
           comm == nullptr ? "NULL" : "not a communicator of libspccl_nccl.so");
    return source;
  }
  source.forward = forwarding();
  source.real = lease->real;
  source.known = !source.forward;
  source.rank = lease->rank;
  source.nranks = lease->nranks;
  return source;
}

// fn of the real NCCL with args, or failed (logged, naming the call) where
// the loaded NCCL lacks it.
template <typename Result, typename Fn, typename... Args>
Result forwardTeamCall(Fn RealNccl::*fn, const char* call, Result failed, Args... args) {
  const RealNccl* real = realNccl();
  if (real == nullptr || real->*fn == nullptr) {
    missingReal(call);
    return failed;
  }
  return callReal(real->*fn, args...);
}

constexpr ncclTeam_t kNoTeam{0, 0, 0};

}  // namespace

extern "C" {

ncclResult_t ncclDevCommCreate(ncclComm_t comm, ncclDevCommRequirements_t const* reqs,
                               ncclDevComm_t* outDevComm) {
  return guardEntry(__func__, [&]() -> ncclResult_t {
    SPCCL_PASS_BACK(DevCommCreate, comm, reqs, outDevComm);
    SPCCL_FIND_COMM(mine, comm, "ncclDevCommCreate", DevCommCreate, comm, reqs, outDevComm);
    SPCCL_REAL_OR(DevCommCreate, mine->real, reqs, outDevComm);
    return notServed(mine, "ncclDevCommCreate");
  });
}
SPCCL_NCCL_PROFILING_ALIAS(ncclDevCommCreate)

ncclResult_t ncclDevCommDestroy(ncclComm_t comm, ncclDevComm_t const* devComm) {
  return guardEntry(__func__, [&]() -> ncclResult_t {
    SPCCL_PASS_BACK(DevCommDestroy, comm, devComm);
    SPCCL_FIND_COMM(mine, comm, "ncclDevCommDestroy", DevCommDestroy, comm, devComm);
    SPCCL_REAL_OR(DevCommDestroy, mine->real, devComm);
    return notServed(mine, "ncclDevCommDestroy");
  });
}
SPCCL_NCCL_PROFILING_ALIAS(ncclDevCommDestroy)

ncclResult_t ncclGinBarrierCreateRequirement(ncclComm_t comm, ncclTeam_t team, int nBarriers,
                                             ncclGinBarrierHandle_t* outHandle,
                                             ncclDevResourceRequirements_t* outReq) {
  return guardEntry(__func__, [&]() -> ncclResult_t {
    SPCCL_PASS_BACK(GinBarrierCreateRequirement, comm, team, nBarriers, outHandle, outReq);
    SPCCL_FIND_COMM(mine, comm, "ncclGinBarrierCreateRequirement", GinBarrierCreateRequirement,
                    comm, team, nBarriers, outHandle, outReq);
    SPCCL_REAL_OR(GinBarrierCreateRequirement, mine->real, team, nBarriers, outHandle, outReq);
    return notServed(mine, "ncclGinBarrierCreateRequirement");
  });
}
SPCCL_NCCL_PROFILING_ALIAS(ncclGinBarrierCreateRequirement)

// The three without a communicator size resources of a device
// communicator: pure functions of the real NCCL, served by it in either
// mode where one loads (replace mode creates no device communicator to
// use them with).
int ncclLLA2ACalcSlots(int maxElts, int maxEltSize) {
  return guardEntryOr<int>(__func__, 0, [&]() -> int {
    const RealNccl* real = realNccl();
    if (real == nullptr || real->LLA2ACalcSlots == nullptr) return 0;
    return callReal(real->LLA2ACalcSlots, maxElts, maxEltSize);
  });
}
SPCCL_NCCL_PROFILING_ALIAS(ncclLLA2ACalcSlots)

ncclResult_t ncclLLA2ACreateRequirement(int nBlocks, int nSlots, ncclLLA2AHandle_t* outHandle,
                                        ncclDevResourceRequirements_t* outReq) {
  return guardEntry(__func__, [&]() -> ncclResult_t {
    const RealNccl* real = realNccl();
    if (real == nullptr) return notServed(nullptr, "ncclLLA2ACreateRequirement");
    return SPCCL_FORWARD(real, LLA2ACreateRequirement, nBlocks, nSlots, outHandle, outReq);
  });
}
SPCCL_NCCL_PROFILING_ALIAS(ncclLLA2ACreateRequirement)

ncclResult_t ncclLsaBarrierCreateRequirement(ncclTeam_t team, int nBarriers,
                                             ncclLsaBarrierHandle_t* outHandle,
                                             ncclDevResourceRequirements_t* outReq) {
  return guardEntry(__func__, [&]() -> ncclResult_t {
    const RealNccl* real = realNccl();
    if (real == nullptr) return notServed(nullptr, "ncclLsaBarrierCreateRequirement");
    return SPCCL_FORWARD(real, LsaBarrierCreateRequirement, team, nBarriers, outHandle, outReq);
  });
}
SPCCL_NCCL_PROFILING_ALIAS(ncclLsaBarrierCreateRequirement)

// The Team API in replace mode. spccl serves no load/store peers, so each
// rank's LSA team (local symmetric access: peers whose memory its kernels
// can address) is itself alone, and a rail (one rank of each LSA team)
// is the whole world; the rank conversions are NCCL's formulas with
// lsaRank 0.
ncclTeam_t ncclTeamWorld(ncclComm_t comm) {
  return guardEntryOr<ncclTeam_t>(__func__, kNoTeam, [&]() -> ncclTeam_t {
    const TeamSource s = teamSource(comm, "ncclTeamWorld");
    if (s.forward) return forwardTeamCall(&RealNccl::TeamWorld, "ncclTeamWorld", kNoTeam, s.real);
    return s.known ? ncclTeam_t{s.nranks, s.rank, 1} : kNoTeam;
  });
}
SPCCL_NCCL_PROFILING_ALIAS_OF_TYPE(ncclTeamWorld, ncclTeam_t, (ncclComm_t))

ncclTeam_t ncclTeamLsa(ncclComm_t comm) {
  return guardEntryOr<ncclTeam_t>(__func__, kNoTeam, [&]() -> ncclTeam_t {
    const TeamSource s = teamSource(comm, "ncclTeamLsa");
    if (s.forward) return forwardTeamCall(&RealNccl::TeamLsa, "ncclTeamLsa", kNoTeam, s.real);
    return s.known ? ncclTeam_t{1, 0, 1} : kNoTeam;
  });
}
SPCCL_NCCL_PROFILING_ALIAS_OF_TYPE(ncclTeamLsa, ncclTeam_t, (ncclComm_t))

ncclTeam_t ncclTeamRail(ncclComm_t comm) {
  return guardEntryOr<ncclTeam_t>(__func__, kNoTeam, [&]() -> ncclTeam_t {
    const TeamSource s = teamSource(comm, "ncclTeamRail");
    if (s.forward) return forwardTeamCall(&RealNccl::TeamRail, "ncclTeamRail", kNoTeam, s.real);
    return s.known ? ncclTeam_t{s.nranks, s.rank, 1} : kNoTeam;
  });
}
SPCCL_NCCL_PROFILING_ALIAS_OF_TYPE(ncclTeamRail, ncclTeam_t, (ncclComm_t))

int ncclTeamRankToWorld(ncclComm_t comm, ncclTeam_t team, int rank) {
  return guardEntryOr<int>(__func__, -1, [&]() -> int {
    const TeamSource s = teamSource(comm, "ncclTeamRankToWorld");
    if (s.forward)
      return forwardTeamCall(&RealNccl::TeamRankToWorld, "ncclTeamRankToWorld", -1, s.real, team,
                             rank);
    return s.known ? s.rank + (rank - team.rank) * team.stride : -1;
  });
}
SPCCL_NCCL_PROFILING_ALIAS_OF_TYPE(ncclTeamRankToWorld, int, (ncclComm_t, ncclTeam_t, int))

int ncclTeamRankToLsa(ncclComm_t comm, ncclTeam_t team, int rank) {
  return guardEntryOr<int>(__func__, -1, [&]() -> int {
    const TeamSource s = teamSource(comm, "ncclTeamRankToLsa");
    if (s.forward)
      return forwardTeamCall(&RealNccl::TeamRankToLsa, "ncclTeamRankToLsa", -1, s.real, team, rank);
    return s.known ? (rank - team.rank) * team.stride : -1;
  });
}
SPCCL_NCCL_PROFILING_ALIAS_OF_TYPE(ncclTeamRankToLsa, int, (ncclComm_t, ncclTeam_t, int))

}  // extern "C"

#endif  // SPCCL_NCCL_HAS_DEVICE_API
