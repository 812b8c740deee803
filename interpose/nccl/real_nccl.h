// The real NCCL, for forward mode (SPCCL_NCCL_MODE=forward): loaded once
// with dlopen(RTLD_LOCAL) from SPCCL_NCCL_LIB or the library search path,
// never this library itself (which may be installed as libnccl.so.2), and
// every function of nccl.h looked up by its pnccl name (the strong
// profiling alias), else its nccl name.
//
// Re-entrancy: the real NCCL calls its own exported functions (ncclBcast
// calls ncclBroadcast, ...), and those calls land in this library. While a
// thread is inside the real NCCL (callReal), the entry points pass every
// call straight back to it.
#pragma once

#include <nccl.h>

// The host functions of NCCL's device API (nccl_device/*.h, NCCL 2.28 on),
// where those headers are found: torch imports ncclDevCommCreate/Destroy.
#if __has_include(<nccl_device/core.h>)
#include <nccl_device/core.h>
#include <nccl_device/gin_barrier.h>
#include <nccl_device/ll_a2a.h>
#include <nccl_device/lsa_barrier.h>
#define SPCCL_NCCL_HAS_DEVICE_API 1
// X(name, function pointer type): the Team functions are overloaded in C++
// (a device-side twin on ncclDevComm), so decltype cannot name them.
#define SPCCL_NCCL_DEVICE_FUNCTIONS(X)                                                             \
  X(DevCommCreate, ncclResult_t (*)(ncclComm_t, ncclDevCommRequirements_t const*, ncclDevComm_t*)) \
  X(DevCommDestroy, ncclResult_t (*)(ncclComm_t, ncclDevComm_t const*))                            \
  X(GinBarrierCreateRequirement,                                                                   \
    ncclResult_t (*)(ncclComm_t, ncclTeam_t, int, ncclGinBarrierHandle_t*,                         \
                     ncclDevResourceRequirements_t*))                                              \
  X(LLA2ACalcSlots, int (*)(int, int))                                                             \
  X(LLA2ACreateRequirement,                                                                        \
    ncclResult_t (*)(int, int, ncclLLA2AHandle_t*, ncclDevResourceRequirements_t*))                \
  X(LsaBarrierCreateRequirement,                                                                   \
    ncclResult_t (*)(ncclTeam_t, int, ncclLsaBarrierHandle_t*, ncclDevResourceRequirements_t*))    \
  X(TeamWorld, ncclTeam_t (*)(ncclComm_t))                                                         \
  X(TeamLsa, ncclTeam_t (*)(ncclComm_t))                                                           \
  X(TeamRail, ncclTeam_t (*)(ncclComm_t))                                                          \
  X(TeamRankToWorld, int (*)(ncclComm_t, ncclTeam_t, int))                                         \
  X(TeamRankToLsa, int (*)(ncclComm_t, ncclTeam_t, int))
#else
#define SPCCL_NCCL_HAS_DEVICE_API 0
#define SPCCL_NCCL_DEVICE_FUNCTIONS(X)
#endif

#include <string>
#include <type_traits>

namespace spccl::nccl {

// Every function nccl.h declares, by name without the nccl prefix.
#define SPCCL_NCCL_FUNCTIONS(X) \
  X(MemAlloc)                   \
  X(MemFree)                    \
  X(GetVersion)                 \
  X(GetUniqueId)                \
  X(CommInitRankConfig)         \
  X(CommInitRank)               \
  X(CommInitAll)                \
  X(CommFinalize)               \
  X(CommDestroy)                \
  X(CommAbort)                  \
  X(CommRevoke)                 \
  X(CommSplit)                  \
  X(CommShrink)                 \
  X(CommInitRankScalable)       \
  X(GetErrorString)             \
  X(GetLastError)               \
  X(ResetDebugInit)             \
  X(CommGetAsyncError)          \
  X(CommCount)                  \
  X(CommCuDevice)               \
  X(CommUserRank)               \
  X(CommRegister)               \
  X(CommDeregister)             \
  X(CommWindowRegister)         \
  X(CommWindowDeregister)       \
  X(RedOpCreatePreMulSum)       \
  X(RedOpDestroy)               \
  X(Reduce)                     \
  X(Bcast)                      \
  X(Broadcast)                  \
  X(AllReduce)                  \
  X(ReduceScatter)              \
  X(AllGather)                  \
  X(AlltoAll)                   \
  X(Gather)                     \
  X(Scatter)                    \
  X(Send)                       \
  X(Recv)                       \
  X(GroupStart)                 \
  X(GroupEnd)                   \
  X(GroupSimulateEnd)

// ncclResetDebugInit is declared deprecated; naming its type is not a use.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
struct RealNccl {
  std::string path;  // what was loaded, for the log
  void* handle = nullptr;
  int version = 0;  // its ncclGetVersion
// NOLINTNEXTLINE(bugprone-macro-parentheses): name is pasted into identifiers
#define SPCCL_NCCL_POINTER(name) decltype(&::nccl##name) name = nullptr;
  SPCCL_NCCL_FUNCTIONS(SPCCL_NCCL_POINTER)
#undef SPCCL_NCCL_POINTER
#define SPCCL_NCCL_TYPED_POINTER(name, type) std::type_identity_t<type> name = nullptr;
  SPCCL_NCCL_DEVICE_FUNCTIONS(SPCCL_NCCL_TYPED_POINTER)
#undef SPCCL_NCCL_TYPED_POINTER
};
#pragma GCC diagnostic pop

// Loads the real NCCL at the first call; nullptr when there is none (the
// reason is logged once). Thread-safe.
const RealNccl* realNccl();

// True while this thread runs inside the real NCCL.
bool insideRealNccl();

// Marks this thread as inside the real NCCL for its lifetime.
class InsideRealNccl {
 public:
  InsideRealNccl();
  ~InsideRealNccl();
  InsideRealNccl(const InsideRealNccl&) = delete;
  InsideRealNccl& operator=(const InsideRealNccl&) = delete;

 private:
  bool previous_;
};

// Calls fn, a function of the real NCCL, with the re-entry flag set.
template <typename Fn, typename... Args>
auto callReal(Fn fn, Args... args) {
  InsideRealNccl inside;
  return fn(args...);
}

// An ncclResult_t function of the real NCCL, by RealNccl member name; one
// the loaded NCCL lacks (an older version) fails with ncclInvalidUsage and
// a message naming it.
#define SPCCL_FORWARD(real, name, ...)                                                        \
  ((real)->name != nullptr ? ::spccl::nccl::callReal((real)->name __VA_OPT__(, ) __VA_ARGS__) \
                           : ::spccl::nccl::missingReal("nccl" #name))
ncclResult_t missingReal(const char* function);

// First line of an entry point: inside the real NCCL, the call goes
// straight back to it, arguments unchanged.
#define SPCCL_PASS_BACK(name, ...)     \
  if (::spccl::nccl::insideRealNccl()) \
  return SPCCL_FORWARD(::spccl::nccl::realNccl(), name, __VA_ARGS__)

}  // namespace spccl::nccl
