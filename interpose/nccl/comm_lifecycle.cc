#include "comm_lifecycle.h"

#include <algorithm>
#include <cinttypes>
#include <cstddef>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/log.h"
#include "core/comm.h"
#include "errors.h"
#include "group.h"
#include "memory_kind.h"
#include "real_nccl.h"
#include "settings.h"
#include "unique_id.h"

namespace spccl::nccl {

namespace {

constexpr unsigned kConfigMagic = 0xcafebeef;  // NCCL_CONFIG_INITIALIZER's

bool forwarding() { return settings().mode == Mode::Forward; }

// The caller's config, read up to its size (an older, smaller struct) and
// ours (a newer, larger one), for the real NCCL and for commName.
struct ConfigCopy {
  bool given = false;
  ncclConfig_t config{};
  std::string name;
  ncclConfig_t* forReal() { return given ? &config : nullptr; }
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
  return handleOf(registerComm(std::move(comm)));
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
    const ncclResult_t r = finishSpccl(
        nullptr, spcclCommInitRank(&comm->spccl, comm->nranks, pending->spcclId, comm->rank));
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
    std::vector<std::thread> threads;
    threads.reserve(static_cast<size_t>(ndev));
    for (int i = 0; i < ndev; ++i)
      threads.emplace_back([&, i] {
        results[static_cast<size_t>(i)] =
            spcclCommInitRank(&made[static_cast<size_t>(i)]->spccl, ndev, id, i);
      });
    for (std::thread& t : threads) t.join();
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

ncclResult_t split(InterposedComm* parent, int color, int key, ncclComm_t* out,
                   ncclConfig_t* config) {
  if (out == nullptr) return fail(parent, ncclInvalidArgument, "ncclCommSplit: newcomm is NULL");
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
    const ncclResult_t r =
        finishSpccl(parent, spcclCommSplit(parent->spccl, color, key, &comm->spccl, nullptr));
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

ncclResult_t shrink(InterposedComm* parent, const int* excludeRanks, int excludeCount,
                    ncclComm_t* out, ncclConfig_t* config, int flags) {
  const char* call = "ncclCommShrink";
  if (out == nullptr) return fail(parent, ncclInvalidArgument, "%s: newcomm is NULL", call);
  if (flags != NCCL_SHRINK_DEFAULT && flags != NCCL_SHRINK_ABORT)
    return fail(parent, ncclInvalidArgument, "%s: shrinkFlags %d is not a NCCL_SHRINK_ value", call,
                flags);
  if (excludeCount < 0 || (excludeCount > 0 && excludeRanks == nullptr))
    return fail(parent, ncclInvalidArgument, "%s: excludeRanksList %p, excludeRanksCount %d", call,
                static_cast<const void*>(excludeRanks), excludeCount);
  std::vector<bool> excluded(static_cast<size_t>(parent->nranks), false);
  for (int i = 0; i < excludeCount; ++i) {
    const int r = excludeRanks[i];
    if (r < 0 || r >= parent->nranks)
      return fail(parent, ncclInvalidArgument, "%s: excluded rank %d is out of range [0, %d)", call,
                  r, parent->nranks);
    excluded[static_cast<size_t>(r)] = true;
  }
  if (excluded[static_cast<size_t>(parent->rank)])
    return fail(parent, ncclInvalidArgument,
                "%s: rank %d is in its own exclusion list; excluded ranks do not call it", call,
                parent->rank);
  std::vector<int> survivors;
  for (int r = 0; r < parent->nranks; ++r)
    if (!excluded[static_cast<size_t>(r)]) survivors.push_back(r);
  auto pending = std::make_shared<PendingInit>();
  const ncclResult_t copied = copyConfig(config, call, &pending->config);
  if (copied != ncclSuccess) return copied;
  const int newRank = static_cast<int>(std::find(survivors.begin(), survivors.end(), parent->rank) -
                                       survivors.begin());
  pending->comm = newComm(newRank, static_cast<int>(survivors.size()),
                          config != nullptr ? pending->config.name : parent->name);
  pending->comm->cudaDevice = parent->cudaDevice;
  pending->out = out;
  pending->call = call;
  Creation creation;
  // The survivors alone: the lowest makes a spccl id and sends it to the
  // others over the parent (point to point: the excluded ranks take no
  // part), then they create the new communicator.
  creation.spcclPart = [pending, parent, survivors]() {
    InterposedComm* comm = pending->comm.get();
    const int leader = survivors.front();
    spcclUniqueId id;
    spcclResult_t r = spcclSuccess;
    if (parent->rank == leader) {
      r = spcclGetUniqueId(&id);
      if (r == spcclSuccess && survivors.size() > 1) {
        spcclGroupStart();
        for (size_t i = 1; i < survivors.size(); ++i)
          spcclSend(&id, sizeof(id), spcclUint8, survivors[i], parent->spccl, nullptr);
        r = spcclGroupEnd();
      }
    } else {
      r = spcclRecv(&id, sizeof(id), spcclUint8, leader, parent->spccl, nullptr);
    }
    if (r != spcclSuccess) return finishSpccl(parent, r);
    return finishSpccl(nullptr, spcclCommInitRank(&comm->spccl, comm->nranks, id, comm->rank));
  };
  if (forwarding())
    creation.realPart = [pending, parent, flags,
                         exclude = std::vector<int>(excludeRanks, excludeRanks + excludeCount)]() {
      const RealNccl* real = realNccl();
      std::vector<int> list = exclude;  // the real NCCL takes a non-const list
      return realOutcome(
          "ncclCommShrink",
          SPCCL_FORWARD(real, CommShrink, parent->real, list.data(), static_cast<int>(list.size()),
                        &pending->comm->real, pending->config.forReal(), flags));
    };
  creation.complete = [pending](ncclResult_t result) {
    return completeCreation(pending->comm, pending->out, result, pending->call);
  };
  return runOrDefer(std::move(creation));
}

ncclResult_t destroy(InterposedComm* comm, bool abort) {
  const Settings& s = settings();
  if (s.report) {
    std::string header =
        std::string(abort ? "aborted" : "destroyed") + ", " + std::to_string(comm->nranks) +
        " ranks, " + (comm->name.empty() ? "" : "name " + comm->name + ", ") +
        "SPCCL_NCCL_MODE=" + modeName(s.mode) + ", SPCCL_NCCL_SPARSE=" + (s.sparse ? "1" : "0") +
        ", SPCCL_NCCL_COMPRESS=" + describe(s.compress) +
        ", SPCCL_INTERPOSE_MIN_BYTES=" + std::to_string(s.minBytes);
    comm->report.print(comm->id, comm->rank, comm->nranks, header);
  }
  std::unique_ptr<InterposedComm> owned = unregisterComm(comm);
  ncclResult_t result =
      finishSpccl(nullptr, abort ? spcclCommAbort(owned->spccl) : spcclCommDestroy(owned->spccl));
  if (owned->real != nullptr) {
    const RealNccl* real = realNccl();
    const ncclResult_t r = abort ? SPCCL_FORWARD(real, CommAbort, owned->real)
                                 : SPCCL_FORWARD(real, CommDestroy, owned->real);
    if (r != ncclSuccess) noteRealFailure();
    if (result == ncclSuccess) result = r;
  }
  return result;
}

}  // namespace spccl::nccl
