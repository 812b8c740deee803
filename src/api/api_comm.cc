// API: unique ids and communicator life cycle.
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstring>
#include <functional>
#include <mutex>
#include <numeric>
#include <vector>

#include "api/api_guard.h"
#include "api/unique_id.h"
#include "base/check.h"
#include "base/knobs.h"
#include "base/socket.h"
#include "coll/small_allgather.h"
#include "core/bootstrap.h"
#include "core/comm.h"
#include "core/comm_init.h"
#include "core/env_discovery.h"
#include "core/flight_dump.h"
#include "core/handshake.h"
#include "core/staged_call.h"
#include "spccl.h"

using namespace spccl;

namespace {

int socketFamily() {
  std::string family = knobString("SPCCL_SOCKET_FAMILY");
  if (family == "AF_INET") return AF_INET;
  if (family == "AF_INET6") return AF_INET6;
  return AF_UNSPEC;
}

spcclResult_t initRank(spcclComm_t* comm, int nranks, const spcclUniqueId& commId, int rank,
                       const spcclConfig_t* config) {
  if (comm == nullptr) return SPCCL_FAIL(spcclInvalidArgument, "comm (output pointer) is NULL");
  if (nranks < 1) return SPCCL_FAIL(spcclInvalidArgument, "nranks %d must be at least 1", nranks);
  if (rank < 0 || rank >= nranks)
    return SPCCL_FAIL(spcclInvalidArgument, "rank %d is out of range [0, %d)", rank, nranks);
  UniqueIdContents id;
  SPCCL_CHECK(decodeUniqueId(commId, &id));
  CommOptions options;
  SPCCL_CHECK(resolveCommOptions(config, &options));
  return createComm(id, nranks, rank, options, comm);
}

// spcclInProgress while a non-blocking spcclCommFinalize's flush is queued,
// then its result.
spcclResult_t finalizeStateOf(spcclComm_t comm) {
  if (comm->finalizeRequest == nullptr) return spcclSuccess;
  AsyncRequest& flush = comm->finalizeRequest->state;
  std::lock_guard<std::mutex> lock(flush.mutex);
  if (!flush.done) return spcclInProgress;
  if (flush.result != spcclSuccess) comm->lastError = flush.error;
  return flush.result;
}

}  // namespace

namespace spccl {

// A unique id whose root runs in this process. Its secret is random (256
// bits), or, for spcclCommSplit, derived from the parent's secret and the
// new id (`parent`), so that the id can travel over the parent's
// connections without its secret: every member derives it alike.
spcclResult_t newUniqueId(const JobSecret* parent, spcclUniqueId* uniqueId) {
  knobsEchoOnce();
  net::Interface iface;
  SPCCL_CHECK(net::pickInterface(knobString("SPCCL_SOCKET_IFNAME"), socketFamily(), &iface));
  int fd = -1;
  UniqueIdContents id;
  SPCCL_CHECK(net::listenOn(iface.addr, 1024, &fd, &id.root));
  id.commId = randomU64();
  spcclResult_t res = spcclSuccess;
  if (parent != nullptr) {
    res = deriveJobSecret(*parent, id.commId, &id.secret);
  } else {
    id.secret.size = kSecretMaxBytes;
    res = randomBytes(id.secret.bytes.data(), id.secret.size);
  }
  if (res != spcclSuccess) {
    ::close(fd);
    return res;
  }
  // The root waits for the ranks a good while: the id may travel slowly.
  startRendezvousRoot(fd, id.secret, id.commId, 5 * knobInt("SPCCL_TIMEOUT_MS"));
  SPCCL_INFO(kLogBootstrap, "unique id: rendezvous root at %s (interface %s)",
             net::toString(id.root).c_str(), iface.name.c_str());
  *uniqueId = encodeUniqueId(id);
  return spcclSuccess;
}

}  // namespace spccl

extern "C" {

spcclResult_t spcclGetUniqueId(spcclUniqueId* uniqueId) {
  return guardApi("spcclGetUniqueId", [&]() -> spcclResult_t {
    clearThreadLastError();
    if (uniqueId == nullptr) return SPCCL_FAIL(spcclInvalidArgument, "uniqueId is NULL");
    return newUniqueId(nullptr, uniqueId);
  });
}

spcclResult_t spcclCommInitRank(spcclComm_t* comm, int nranks, spcclUniqueId commId, int rank) {
  return guardApi("spcclCommInitRank", [&]() -> spcclResult_t {
    clearThreadLastError();
    return initRank(comm, nranks, commId, rank, nullptr);
  });
}

spcclResult_t spcclCommInitRankConfig(spcclComm_t* comm, int nranks, spcclUniqueId commId, int rank,
                                      const spcclConfig_t* config) {
  return guardApi("spcclCommInitRankConfig", [&]() -> spcclResult_t {
    clearThreadLastError();
    return initRank(comm, nranks, commId, rank, config);
  });
}

spcclResult_t spcclCommInitFromEnv(spcclComm_t* comm, const spcclConfig_t* config) {
  return guardApi("spcclCommInitFromEnv", [&]() -> spcclResult_t {
    clearThreadLastError();
    if (comm == nullptr) return SPCCL_FAIL(spcclInvalidArgument, "comm (output pointer) is NULL");
    knobsEchoOnce();
    LaunchEnv env;
    SPCCL_CHECK(discoverLaunchEnv(&env));
    UniqueIdContents id;
    std::string rootText = formatHostPort(env.rootHost, env.rootPort);
    SPCCL_CHECK(net::parseHostPort(rootText, &id.root));
    id.secret = env.secret;
    if (env.secret.empty()) {
      // SPCCL_AUTH=off: no secret, a communicator id from the root's address.
      std::string material = "spccl-noauth|" + rootText + "|" + std::to_string(env.nranks);
      SPCCL_CHECK(commIdFromSecret(JobSecret{}, &id.commId));
      id.commId ^= std::hash<std::string>{}(material);
      static std::once_flag warned;
      std::call_once(warned, [] {
        SPCCL_WARN(
            "SPCCL_AUTH=off and no job secret: connections are not authenticated; anyone who can "
            "reach this job's ports can join it or feed it data (docs/security.md)");
      });
    } else {
      SPCCL_CHECK(commIdFromSecret(env.secret, &id.commId));
    }
    CommOptions options;
    SPCCL_CHECK(resolveCommOptions(config, &options));
    SPCCL_INFO(kLogInit, "rank %d of %d from %s, rendezvous %s, job secret from %s", env.rank,
               env.nranks, env.source.c_str(), rootText.c_str(), env.secretOrigin.c_str());
    if (env.rank == 0) {
      // Rank 0 hosts the rendezvous on the advertised address only (every
      // address with SPCCL_LISTEN_ANY=1).
      net::SockAddr bindAddr = id.root;
      if (knobInt("SPCCL_LISTEN_ANY") != 0) {
        bindAddr = net::SockAddr{};
        bindAddr.sa.sa_family = id.root.sa.sa_family;
        net::setSockAddrPort(&bindAddr, net::sockAddrPort(id.root));
      }
      int fd = -1;
      net::SockAddr bound;
      if (net::listenOn(bindAddr, 1024, &fd, &bound) != spcclSuccess)
        return SPCCL_FAIL(
            spcclSystemError,
            "rank 0 cannot host the rendezvous at %s (%s): is that an address of this "
            "host? (SPCCL_LISTEN_ANY=1 listens on every address)",
            net::toString(bindAddr).c_str(), threadLastError().c_str());
      startRendezvousRoot(fd, id.secret, id.commId, options.timeoutMs);
    }
    return createComm(id, env.nranks, env.rank, options, comm);
  });
}

spcclResult_t spcclCommSplit(spcclComm_t comm, int color, int key, spcclComm_t* newcomm,
                             const spcclConfig_t* config) {
  return guardCommApi("spcclCommSplit", comm, [&]() -> spcclResult_t {
    clearThreadLastError();
    if (comm == nullptr) return SPCCL_FAIL(spcclInvalidArgument, "comm is NULL");
    if (newcomm == nullptr)
      return rejectCall(comm, SPCCL_FAIL(spcclInvalidArgument,
                                         "spcclCommSplit: newcomm (output pointer) is NULL"));
    if (color < 0 && color != SPCCL_SPLIT_NOCOLOR)
      return rejectCall(comm, SPCCL_FAIL(spcclInvalidArgument,
                                         "spcclCommSplit: color %d must be >= 0 or "
                                         "SPCCL_SPLIT_NOCOLOR",
                                         color));
    CommOptions options = comm->options;
    if (config != nullptr) {
      spcclResult_t checked = resolveCommOptions(config, &options);
      if (checked != spcclSuccess) return rejectCall(comm, checked);
    }
    *newcomm = nullptr;
    struct Entry {
      int32_t color, key;
      spcclUniqueId id;
    };
    const int n = comm->nranks;
    std::vector<Entry> entries(n);
    spcclResult_t res = runBlocking(comm, [&] {
      // Round 1: colors and keys. Round 2: each group's leader offers an id.
      Entry mine{color, key, {}};
      SPCCL_CHECK(internalAllGather(*comm->engine, &mine, sizeof(Entry), entries.data()));
      std::vector<int> group;
      for (int r = 0; r < n; ++r)
        if (color != SPCCL_SPLIT_NOCOLOR && entries[r].color == color) group.push_back(r);
      std::stable_sort(group.begin(), group.end(), [&](int a, int b) {
        return entries[a].key != entries[b].key ? entries[a].key < entries[b].key : a < b;
      });
      // The id's secret is derived from this communicator's (newUniqueId),
      // so what travels here carries none.
      if (!group.empty() && group[0] == comm->rank) {
        SPCCL_CHECK(newUniqueId(&comm->secret, &mine.id));
        UniqueIdContents offered;
        SPCCL_CHECK(decodeUniqueId(mine.id, &offered));
        offered.secret = JobSecret{};
        mine.id = encodeUniqueId(offered);
      }
      return internalAllGather(*comm->engine, &mine, sizeof(Entry), entries.data());
    });
    if (res != spcclSuccess) return finishCall(comm, res);
    if (color == SPCCL_SPLIT_NOCOLOR) return spcclSuccess;
    std::vector<int> group;
    for (int r = 0; r < n; ++r)
      if (entries[r].color == color) group.push_back(r);
    std::stable_sort(group.begin(), group.end(), [&](int a, int b) {
      return entries[a].key != entries[b].key ? entries[a].key < entries[b].key : a < b;
    });
    int newRank =
        static_cast<int>(std::find(group.begin(), group.end(), comm->rank) - group.begin());
    UniqueIdContents id;
    SPCCL_CHECK(decodeUniqueId(entries[group[0]].id, &id));
    SPCCL_CHECK(deriveJobSecret(comm->secret, id.commId, &id.secret));
    return finishCall(comm,
                      createComm(id, static_cast<int>(group.size()), newRank, options, newcomm));
  });
}

spcclResult_t spcclCommDestroy(spcclComm_t comm) {
  return guardApi("spcclCommDestroy", [&]() -> spcclResult_t {
    if (comm == nullptr) return spcclSuccess;
    destroyComm(comm, false);
    return spcclSuccess;
  });
}

spcclResult_t spcclCommFinalize(spcclComm_t comm) {
  return guardCommApi("spcclCommFinalize", comm, [&]() -> spcclResult_t {
    clearThreadLastError();
    if (comm == nullptr) return SPCCL_FAIL(spcclInvalidArgument, "spcclCommFinalize: comm is NULL");
    if (comm->finalized.load())
      return finishCall(comm, SPCCL_FAIL(spcclInvalidUsage,
                                         "spcclCommFinalize: rank %d's communicator is already "
                                         "finalized",
                                         comm->rank));
    if (!comm->options.blocking) {
      // Queued behind every outstanding operation: done when they are.
      spcclResult_t queued = runAsync(
          comm, [] { return spcclSuccess; }, &comm->finalizeRequest);
      comm->finalized.store(true);
      return queued == spcclSuccess ? spcclInProgress : finishCall(comm, queued);
    }
    spcclResult_t flushed = runBlocking(comm, [] { return spcclSuccess; });
    comm->finalized.store(true);
    if (flushed == spcclSuccess) flushed = checkNoAsyncError("spcclCommFinalize", comm);
    return finishCall(comm, flushed);
  });
}

spcclResult_t spcclCommAbort(spcclComm_t comm) {
  return guardApi("spcclCommAbort", [&]() -> spcclResult_t {
    if (comm == nullptr) return spcclSuccess;
    // A creation still running stops first: it may be publishing the
    // engine the flight recorder below reads.
    if (comm->init) cancelCommInit(*comm);
    {
      QuietFailures quiet;  // a recorder that is off has nothing to say here
      dumpFlightRecorder(comm, nullptr, "spcclCommAbort");
    }
    destroyComm(comm, true);
    return spcclSuccess;
  });
}

spcclResult_t spcclCommCount(const spcclComm_t comm, int* count) {
  return guardCommQuery("spcclCommCount", comm, [&]() -> spcclResult_t {
    if (comm == nullptr) return SPCCL_FAIL(spcclInvalidArgument, "comm is NULL");
    if (count == nullptr) return SPCCL_FAIL(spcclInvalidArgument, "count is NULL");
    *count = comm->nranks;
    return spcclSuccess;
  });
}

spcclResult_t spcclCommGetAsyncError(spcclComm_t comm, spcclResult_t* asyncError) {
  return guardCommQuery("spcclCommGetAsyncError", comm, [&]() -> spcclResult_t {
    if (comm == nullptr)
      return SPCCL_FAIL(spcclInvalidArgument, "spcclCommGetAsyncError: comm is NULL");
    if (asyncError == nullptr)
      return SPCCL_FAIL(spcclInvalidArgument, "spcclCommGetAsyncError: asyncError is NULL");
    spcclResult_t state = commInitState(comm);
    if (state == spcclSuccess) state = asyncErrorOf(comm);
    if (state == spcclSuccess) state = finalizeStateOf(comm);
    *asyncError = state;
    return spcclSuccess;
  });
}

spcclResult_t spcclCommCuDevice(const spcclComm_t comm, int* device) {
  return guardCommQuery("spcclCommCuDevice", comm, [&]() -> spcclResult_t {
    if (comm == nullptr) return SPCCL_FAIL(spcclInvalidArgument, "spcclCommCuDevice: comm is NULL");
    if (device == nullptr)
      return SPCCL_FAIL(spcclInvalidArgument, "spcclCommCuDevice: device is NULL");
    *device = comm->cudaDevice;
    return spcclSuccess;
  });
}

spcclResult_t spcclCommUserRank(const spcclComm_t comm, int* rank) {
  return guardCommQuery("spcclCommUserRank", comm, [&]() -> spcclResult_t {
    if (comm == nullptr) return SPCCL_FAIL(spcclInvalidArgument, "comm is NULL");
    if (rank == nullptr) return SPCCL_FAIL(spcclInvalidArgument, "rank is NULL");
    *rank = comm->rank;
    return spcclSuccess;
  });
}

spcclResult_t spcclCommGetCounters(const spcclComm_t comm, spcclCounters_t* counters) {
  return guardCommApi("spcclCommGetCounters", comm, [&]() -> spcclResult_t {
    if (comm == nullptr) return SPCCL_FAIL(spcclInvalidArgument, "comm is NULL");
    if (counters == nullptr) return SPCCL_FAIL(spcclInvalidArgument, "counters is NULL");
    std::lock_guard<std::mutex> exec(comm->execMutex);
    *counters = comm->engine ? comm->engine->counters() : spcclCounters_t{};
    return spcclSuccess;
  });
}

const char* spcclGetLastError(spcclComm_t comm) {
  if (comm == nullptr) return threadLastError().empty() ? "no error" : threadLastErrorText();
  return comm->lastError.c_str();
}

}  // extern "C"
