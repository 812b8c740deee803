#include "comm_lifecycle.h"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "base/log.h"
#include "comm_entry.h"
#include "core/comm.h"
#include "errors.h"
#include "group.h"
#include "memory_kind.h"
#include "real_nccl.h"
#include "run_each.h"
#include "settings.h"
#include "unique_id.h"

namespace spccl::nccl {

namespace {

constexpr unsigned kConfigMagic = 0xcafebeef;  // NCCL_CONFIG_INITIALIZER's

// The caller's config, read up to its size (an older, smaller struct) and
// ours (a newer, larger one), for the real NCCL and for commName.
struct ConfigCopy {
  bool given = false;
  ncclConfig_t config{};
  std::string name;
  ncclConfig_t* forReal() { return given ? &config : nullptr; }
  // NCCL's contract: config.blocking = 0 (or, left undefined,
  // NCCL_COMM_BLOCKING=0) makes creation return ncclInProgress at once and
  // ncclCommGetAsyncError report it until the communicator is ready.
  bool nonBlocking() const {
    const bool reaches = given && config.size >= offsetof(ncclConfig_t, blocking) + sizeof(int);
    if (reaches && config.blocking != NCCL_CONFIG_UNDEF_INT) return config.blocking == 0;
    const char* env = std::getenv("NCCL_COMM_BLOCKING");
    return env != nullptr && std::strcmp(env, "0") == 0;
  }
};

ncclResult_t copyConfig(const ncclConfig_t* config, const char* call, ConfigCopy* out) {
  if (config == nullptr) return ncclSuccess;
  const size_t header = offsetof(ncclConfig_t, version) + sizeof(config->version);
  if (config->size < header || config->magic != kConfigMagic)
    return fail(nullptr, ncclInvalidArgument,
                "%s: config (size %zu, magic 0x%08x) is not initialised with "
                "NCCL_CONFIG_INITIALIZER",
                call, config->size, config->magic);
  out->given = true;
  const size_t bytes = std::min(config->size, sizeof(ncclConfig_t));
  std::memcpy(&out->config, config, bytes);
  out->config.size = bytes;
  if (bytes >= offsetof(ncclConfig_t, commName) + sizeof(config->commName) &&
      out->config.commName != nullptr)
    out->name = out->config.commName;
  return ncclSuccess;
}

const char* realErrorString(const RealNccl* real, ncclResult_t r) {
  return real->GetErrorString != nullptr ? callReal(real->GetErrorString, r) : "?";
}

// The real NCCL's result of creating a communicator, passed on unchanged.
ncclResult_t realOutcome(const char* call, ncclResult_t r) {
  if (r == ncclSuccess || r == ncclInProgress) return r;
  const RealNccl* real = realNccl();
  SPCCL_WARN(
      "NCCL interposer: %s forwarded to the real NCCL %d (%s), which returned %d (%s): passed "
      "through unchanged",
      call, real->version, real->path.c_str(), static_cast<int>(r), realErrorString(real, r));
  noteRealFailure();
  return r;
}

std::unique_ptr<InterposedComm> newComm(int rank, int nranks, const std::string& name) {
  auto comm = std::make_unique<InterposedComm>();
  comm->rank = rank;
  comm->nranks = nranks;
  comm->name = name;
  comm->cudaDevice = currentCudaDevice();
  return comm;
}

// Releases what a failed creation made.
void release(InterposedComm* comm) {
  if (comm->spccl != nullptr) spcclCommDestroy(comm->spccl);
  comm->spccl = nullptr;
  if (comm->real != nullptr) {
    const RealNccl* real = realNccl();
    if (real->CommAbort != nullptr) callReal(real->CommAbort, comm->real);
  }
  comm->real = nullptr;
}

// Registers a created communicator and hands out its handle.
ncclComm_t publish(std::unique_ptr<InterposedComm> comm, const char* call) {
  comm->id = comm->spccl->commId;
  SPCCL_INFO(kLogInit, "NCCL interposer: %s: rank %d of %d, communicator %016" PRIx64 " (%s%s)",
             call, comm->rank, comm->nranks, comm->id, comm->name.empty() ? "" : "name ",
             comm->name.empty() ? (comm->real != nullptr ? "spccl and the real NCCL" : "spccl")
                                : comm->name.c_str());
  return registerComm(std::shared_ptr<InterposedComm>(std::move(comm)));
}

// Forward mode: rank 0 makes the real NCCL's unique id and broadcasts it,
// with its result, over the new spccl communicator.
ncclResult_t shareRealId(InterposedComm* comm, ncclUniqueId* realId) {
  struct {
    int32_t result;
    int32_t padding;
    ncclUniqueId id;
  } message{};
  if (comm->rank == 0) {
    const RealNccl* real = realNccl();
    message.result = SPCCL_FORWARD(real, GetUniqueId, &message.id);
  }
  const ncclResult_t sent = finishSpccl(comm, spcclBroadcast(&message, &message, sizeof(message),
                                                             spcclUint8, 0, comm->spccl, nullptr));
  if (sent != ncclSuccess) return sent;
  if (message.result != ncclSuccess)
    return realOutcome("ncclGetUniqueId (rank 0, for ncclCommInitRank)",
                       static_cast<ncclResult_t>(message.result));
  *realId = message.id;
  return ncclSuccess;
}

// Split and shrink make spccl's side at once, whatever the parent's
// setting (a NULL config would inherit a non-blocking parent's): the
// interposer reads the new rank and size right after, and NCCL allows a
// non-blocking communicator's calls to complete before they return.
spcclConfig_t blockingSpcclConfig() {
  spcclConfig_t config = SPCCL_CONFIG_INITIALIZER;
  config.blocking = 1;
  return config;
}

struct PendingInit {
  std::unique_ptr<InterposedComm> comm;
  spcclUniqueId spcclId{};
  ncclUniqueId realId{};
  ConfigCopy config;
  ncclComm_t* out = nullptr;
  const char* call = "";
};

// The last step of every creation: publish on success, release otherwise.
ncclResult_t completeCreation(std::unique_ptr<InterposedComm>& comm, ncclComm_t* out,
                              ncclResult_t result, const char* call) {
  if ((result == ncclSuccess || result == ncclInProgress) && comm->spccl != nullptr) {
    *out = publish(std::move(comm), call);
    return result;
  }
  release(comm.get());
  return result;
}

}  // namespace

ncclResult_t initRank(ncclComm_t* out, int nranks, const ncclUniqueId& id, int rank,
                      const ncclConfig_t* config, const char* call) {
  if (out == nullptr) return fail(nullptr, ncclInvalidArgument, "%s: comm is NULL", call);
  if (nranks < 1 || rank < 0 || rank >= nranks)
    return fail(nullptr, ncclInvalidArgument, "%s: rank %d, nranks %d: need 0 <= rank < nranks",
                call, rank, nranks);
  auto pending = std::make_shared<PendingInit>();
  if (!unpackUniqueId(id, &pending->spcclId))
    return fail(nullptr, ncclInvalidArgument,
                "%s: commId was not made by ncclGetUniqueId of libspccl_nccl.so", call);
  const ncclResult_t copied = copyConfig(config, call, &pending->config);
  if (copied != ncclSuccess) return copied;
  pending->comm = newComm(rank, nranks, pending->config.name);
  pending->out = out;
  pending->call = call;
  const bool forward = forwarding();
  Creation creation;
  creation.spcclPart = [pending, forward]() {
    InterposedComm* comm = pending->comm.get();
    // Replace mode honours a non-blocking config with spccl's own
    // (spcclInProgress maps to ncclInProgress); forward mode needs spccl's
    // communicator at once to share the real id, and the real NCCL gets the
    // caller's config.
    spcclConfig_t spcclConfig = SPCCL_CONFIG_INITIALIZER;
    spcclConfig.blocking = !forward && pending->config.nonBlocking() ? 0 : 1;
    const ncclResult_t r =
        finishSpccl(nullptr, spcclCommInitRankConfig(&comm->spccl, comm->nranks, pending->spcclId,
                                                     comm->rank, &spcclConfig));
    if (r != ncclSuccess || !forward) return r;
    return shareRealId(comm, &pending->realId);
  };
  if (forward)
    creation.realPart = [pending]() {
      InterposedComm* comm = pending->comm.get();
      const RealNccl* real = realNccl();
      const ncclResult_t r =
          pending->config.given
              ? SPCCL_FORWARD(real, CommInitRankConfig, &comm->real, comm->nranks, pending->realId,
                              comm->rank, pending->config.forReal())
              : SPCCL_FORWARD(real, CommInitRank, &comm->real, comm->nranks, pending->realId,
                              comm->rank);
      return realOutcome(pending->call, r);
    };
  creation.complete = [pending](ncclResult_t result) {
    return completeCreation(pending->comm, pending->out, result, pending->call);
  };
  return runOrDefer(std::move(creation));
}

ncclResult_t initAll(ncclComm_t* comms, int ndev, const int* devlist) {
  if (comms == nullptr || ndev < 1)
    return fail(nullptr, ncclInvalidArgument, "ncclCommInitAll: comm %p, ndev %d",
                static_cast<void*>(comms), ndev);
  std::vector<ncclComm_t> reals(static_cast<size_t>(ndev), nullptr);
  if (forwarding()) {
    const RealNccl* real = realNccl();
    const ncclResult_t r = realOutcome(
        "ncclCommInitAll", SPCCL_FORWARD(real, CommInitAll, reals.data(), ndev, devlist));
    if (r != ncclSuccess) return r;
  }
  spcclUniqueId id;
  ncclResult_t result = finishSpccl(nullptr, spcclGetUniqueId(&id));
  std::vector<std::unique_ptr<InterposedComm>> made;
  std::vector<spcclResult_t> results(static_cast<size_t>(ndev), spcclSuccess);
  for (int i = 0; i < ndev; ++i) {
    made.push_back(newComm(i, ndev, ""));
    made.back()->cudaDevice = devlist != nullptr ? devlist[i] : i;
    made.back()->real = reals[static_cast<size_t>(i)];
  }
  if (result == ncclSuccess) {
    // One rendezvous of ndev ranks: each needs a thread of its own.
    runEach(static_cast<size_t>(ndev), [&](size_t i) {
      results[i] = spcclCommInitRank(&made[i]->spccl, ndev, id, static_cast<int>(i));
    });
    for (spcclResult_t r : results)
      if (r != spcclSuccess && result == ncclSuccess) result = finishSpccl(nullptr, r);
  }
  for (int i = 0; i < ndev; ++i) {
    if (result == ncclSuccess)
      comms[i] = publish(std::move(made[static_cast<size_t>(i)]), "ncclCommInitAll");
    else
      release(made[static_cast<size_t>(i)].get());
  }
  return result;
}

ncclResult_t split(const CommLease& lease, int color, int key, ncclComm_t* out,
                   ncclConfig_t* config) {
  const std::shared_ptr<InterposedComm>& parent = lease.shared();
  if (out == nullptr)
    return fail(parent.get(), ncclInvalidArgument, "ncclCommSplit: newcomm is NULL");
  if (parent->revoked.load())
    return fail(parent.get(), ncclInvalidUsage,
                "ncclCommSplit: the communicator was revoked (ncclCommRevoke); spccl can only "
                "shrink a revoked communicator (ncclCommShrink)");
  auto pending = std::make_shared<PendingInit>();
  const ncclResult_t copied = copyConfig(config, "ncclCommSplit", &pending->config);
  if (copied != ncclSuccess) return copied;
  pending->comm = newComm(0, 0, config != nullptr ? pending->config.name : parent->name);
  pending->comm->cudaDevice = parent->cudaDevice;
  pending->out = out;
  pending->call = "ncclCommSplit";
  Creation creation;
  creation.spcclPart = [pending, parent, color, key]() {
    InterposedComm* comm = pending->comm.get();
    const spcclConfig_t blocking = blockingSpcclConfig();
    const ncclResult_t r = finishSpccl(
        parent.get(), spcclCommSplit(parent->spccl, color, key, &comm->spccl, &blocking));
    if (r == ncclSuccess && comm->spccl != nullptr) {
      spcclCommUserRank(comm->spccl, &comm->rank);
      spcclCommCount(comm->spccl, &comm->nranks);
    }
    return r;
  };
  if (forwarding())
    creation.realPart = [pending, parent, color, key]() {
      const RealNccl* real = realNccl();
      return realOutcome("ncclCommSplit",
                         SPCCL_FORWARD(real, CommSplit, parent->real, color, key,
                                       &pending->comm->real, pending->config.forReal()));
    };
  creation.uses = parent;
  creation.complete = [pending, color](ncclResult_t result) {
    if (result == ncclSuccess && color == NCCL_SPLIT_NOCOLOR) {
      *pending->out = nullptr;
      release(pending->comm.get());
      return result;
    }
    return completeCreation(pending->comm, pending->out, result, pending->call);
  };
  return runOrDefer(std::move(creation));
}

ncclResult_t shrink(const CommLease& lease, const int* excludeRanks, int excludeCount,
                    ncclComm_t* out, ncclConfig_t* config, int flags) {
  const std::shared_ptr<InterposedComm>& parent = lease.shared();
  const char* call = "ncclCommShrink";
  if (out == nullptr) return fail(parent.get(), ncclInvalidArgument, "%s: newcomm is NULL", call);
  if (flags != NCCL_SHRINK_DEFAULT && flags != NCCL_SHRINK_ABORT)
    return fail(parent.get(), ncclInvalidArgument, "%s: shrinkFlags %d is not a NCCL_SHRINK_ value",
                call, flags);
  if (excludeCount < 0 || (excludeCount > 0 && excludeRanks == nullptr))
    return fail(parent.get(), ncclInvalidArgument, "%s: excludeRanksList %p, excludeRanksCount %d",
                call, static_cast<const void*>(excludeRanks), excludeCount);
  std::vector<bool> excluded(static_cast<size_t>(parent->nranks), false);
  for (int i = 0; i < excludeCount; ++i) {
    const int r = excludeRanks[i];
    if (r < 0 || r >= parent->nranks)
      return fail(parent.get(), ncclInvalidArgument, "%s: excluded rank %d is out of range [0, %d)",
                  call, r, parent->nranks);
    excluded[static_cast<size_t>(r)] = true;
  }
  if (excluded[static_cast<size_t>(parent->rank)])
    return fail(parent.get(), ncclInvalidArgument,
                "%s: rank %d is in its own exclusion list; excluded ranks do not call it", call,
                parent->rank);
  auto pending = std::make_shared<PendingInit>();
  const ncclResult_t copied = copyConfig(config, call, &pending->config);
  if (copied != ncclSuccess) return copied;
  // The new rank and size are spccl's (dense, old order); these are
  // replaced by its answer.
  pending->comm = newComm(0, 0, config != nullptr ? pending->config.name : parent->name);
  pending->comm->cudaDevice = parent->cudaDevice;
  pending->out = out;
  pending->call = call;
  std::vector<int> exclude(excludeRanks, excludeRanks + excludeCount);
  Creation creation;
  // spccl's shrink runs over the fault channel, not the parent's engine: it
  // works after a revoke or a failure, and the excluded ranks take no part.
  // NCCL_SHRINK_ABORT asks NCCL to stop the parent's kernels first; spccl
  // has nothing to stop for it.
  creation.spcclPart = [pending, parent, exclude]() {
    InterposedComm* comm = pending->comm.get();
    const spcclConfig_t blocking = blockingSpcclConfig();
    const ncclResult_t r = finishSpccl(
        parent.get(), spcclCommShrink(parent->spccl, exclude.data(),
                                      static_cast<int>(exclude.size()), &blocking, &comm->spccl));
    if (r == ncclSuccess && comm->spccl != nullptr) {
      spcclCommUserRank(comm->spccl, &comm->rank);
      spcclCommCount(comm->spccl, &comm->nranks);
    }
    return r;
  };
  if (forwarding())
    creation.realPart = [pending, parent, flags, exclude]() {
      const RealNccl* real = realNccl();
      std::vector<int> list = exclude;  // the real NCCL takes a non-const list
      return realOutcome(
          "ncclCommShrink",
          SPCCL_FORWARD(real, CommShrink, parent->real, list.data(), static_cast<int>(list.size()),
                        &pending->comm->real, pending->config.forReal(), flags));
    };
  creation.uses = parent;
  creation.complete = [pending](ncclResult_t result) {
    return completeCreation(pending->comm, pending->out, result, pending->call);
  };
  return runOrDefer(std::move(creation));
}

ncclResult_t revoke(InterposedComm* comm, int flags) {
  const char* call = "ncclCommRevoke";
  // NCCL's answers (init.cc): a flag other than NCCL_REVOKE_DEFAULT, a
  // second revoke and a revoke after ncclCommFinalize are invalid
  // arguments.
  if (flags != NCCL_REVOKE_DEFAULT)
    return fail(comm, ncclInvalidArgument, "%s: revokeFlags %d must be NCCL_REVOKE_DEFAULT (0)",
                call, flags);
  if (comm->finalized.load())
    return fail(comm, ncclInvalidArgument, "%s: the communicator was finalized", call);
  if (comm->revoked.exchange(true))
    return fail(comm, ncclInvalidArgument, "%s: the communicator is already revoked", call);
  // spccl's revoke reaches every rank (NCCL's stays on the calling one):
  // the peers' calls on comm fail at once instead of waiting for them to
  // revoke too. Revoking on every rank, as NCCL programs do, is harmless.
  ncclResult_t result = finishSpccl(comm, spcclCommRevoke(comm->spccl));
  if (comm->real != nullptr) {
    const ncclResult_t r = SPCCL_FORWARD(realNccl(), CommRevoke, comm->real, flags);
    if (r != ncclSuccess) noteRealFailure();
    if (result == ncclSuccess) result = r;
  }
  return result;
}

namespace {

// SPCCL_INTERPOSE_REPORT's lines for comm, as it is destroyed or aborted.
// Where memory has run out they are left out: the communicator is
// unregistered already, and must still be freed.
void printReport(const InterposedComm& comm, bool abort) noexcept {
  try {
    const Settings& s = settings();
    if (!s.report) return;
    std::string header =
        std::string(abort ? "aborted" : "destroyed") + ", " + std::to_string(comm.nranks) +
        " ranks, " + (comm.name.empty() ? "" : "name " + comm.name + ", ") +
        "SPCCL_NCCL_MODE=" + modeName(s.mode) + ", SPCCL_NCCL_SPARSE=" + (s.sparse ? "1" : "0") +
        ", SPCCL_NCCL_COMPRESS=" + describe(s.compress) +
        ", SPCCL_INTERPOSE_MIN_BYTES=" + std::to_string(s.minBytes);
    spcclCounters_t traffic{};
    const bool counted =
        comm.spccl != nullptr && spcclCommGetCounters(comm.spccl, &traffic) == spcclSuccess;
    comm.report.print(comm.id, comm.rank, comm.nranks, header, counted ? &traffic : nullptr);
  } catch (const std::exception& e) {
    try {
      SPCCL_WARN("NCCL interposer: rank %d's report is left out: %s", comm.rank, e.what());
    } catch (const std::exception&) {
      // (the log could not be set up either)
    }
  }
}

}  // namespace

ncclResult_t destroy(const std::shared_ptr<InterposedComm>& owned, bool abort) {
  printReport(*owned, abort);
  const int inside = owned->calls.close();
  const RealNccl* real = owned->real != nullptr ? realNccl() : nullptr;
  ncclResult_t realResult = ncclSuccess;
  if (abort) {
    // ncclCommAbort while other threads are inside calls on comm: each is
    // asked to stop, as spcclCommAbort does (the spccl communicator is
    // freed only after they have left).
    if (inside > 0) interruptCalls(owned->spccl, "ncclCommAbort was called on this communicator");
    // First, so that a call of another thread blocked in the real NCCL
    // returns (NCCL's abort is made for that).
    if (real != nullptr) realResult = SPCCL_FORWARD(real, CommAbort, owned->real);
  }
  const int timeoutMs = owned->spccl != nullptr ? owned->spccl->options.timeoutMs : 0;
  if (inside > 0 && !owned->calls.waitUntilIdle(std::chrono::milliseconds(timeoutMs))) {
    // The wrapper lives on with the last lease; the spccl communicator
    // must not be freed under a call that is still inside it.
    SPCCL_WARN("NCCL interposer: %s: call(s) of other threads on rank %d's communicator %016" PRIx64
               " did not return within %d ms; its spccl communicator stays allocated",
               abort ? "ncclCommAbort" : "ncclCommDestroy", owned->rank, owned->id, timeoutMs);
    return abort ? realResult
                 : fail(owned.get(), ncclInternalError,
                        "ncclCommDestroy: calls on the communicator did not return within %d ms",
                        timeoutMs);
  }
  ncclResult_t result =
      finishSpccl(nullptr, abort ? spcclCommAbort(owned->spccl) : spcclCommDestroy(owned->spccl));
  owned->spccl = nullptr;
  if (real != nullptr && !abort) realResult = SPCCL_FORWARD(real, CommDestroy, owned->real);
  if (realResult != ncclSuccess) noteRealFailure();
  if (result == ncclSuccess) result = realResult;
  return result;
}

}  // namespace spccl::nccl
