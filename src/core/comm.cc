#include "core/comm.h"

#include <poll.h>
#include <unistd.h>

#include <cinttypes>
#include <cstring>

#include "core/check.h"
#include "core/knobs.h"
#include "core/link_profile.h"
#include "core/transport_registry.h"
#include "sparse/index_partition.h"
#include "sparse/planner.h"
#include "sparse/sparse_workspace.h"

namespace spccl {

namespace {

// A listening endpoint of one transport.
struct Listener {
  const spcclNet_v1_t* net = nullptr;
  void* comm = nullptr;
};

// An accepted connection whose hello has not arrived yet.
struct PendingAccept {
  const spcclNet_v1_t* net = nullptr;
  void* recvComm = nullptr;
  void* request = nullptr;
  alignas(8) unsigned char buffer[sizeof(FrameHeader) + kMaxAbortText];
};

struct PendingHello {
  void* request = nullptr;
  FrameHeader header;
};

bool wantsTransport(const std::string& setting, const char* name) {
  return setting == "auto" ? (std::strcmp(name, "tcp") == 0 || std::strcmp(name, "shm") == 0)
                           : setting == name;
}

spcclResult_t openListener(const std::string& name, unsigned char* handle,
                           std::vector<Listener>* listeners) {
  Listener listener;
  SPCCL_CHECK(getTransport(name, &listener.net));
  SPCCL_CHECK(listener.net->listen(handle, &listener.comm));
  listeners->push_back(listener);
  return spcclSuccess;
}

// The transport for a peer; both ends compute the same answer from the
// shared rank table.
spcclResult_t chooseTransport(const spcclComm& comm, int peer, std::string* name,
                              const unsigned char** handle) {
  const RankInfo& them = comm.ranks[peer];
  const RankInfo& me = comm.ranks[comm.rank];
  const std::string& setting = comm.options.transport;
  bool sameHost = them.hostId == me.hostId;
  if (setting == "auto") {
    *name = sameHost ? "shm" : "tcp";
  } else if (setting == "shm" && !sameHost) {
    return SPCCL_FAIL(spcclInvalidUsage,
                      "SPCCL_TRANSPORT=shm, but rank %d is on host %s and rank %d on host %s",
                      peer, them.hostname, comm.rank, me.hostname);
  } else {
    *name = setting;
  }
  *handle = *name == "tcp" ? them.tcpHandle : *name == "shm" ? them.shmHandle : them.pluginHandle;
  return spcclSuccess;
}

spcclResult_t connectMesh(spcclComm& comm, std::vector<Listener>& listeners,
                          std::vector<PeerConnection>* peers) {
  const int n = comm.nranks;
  Deadline deadline(comm.options.timeoutMs);
  peers->assign(n, PeerConnection{});
  std::vector<PendingHello> hellos(n);
  for (int peer = 0; peer < n; ++peer) {
    if (peer == comm.rank) continue;
    std::string name;
    const unsigned char* handle = nullptr;
    SPCCL_CHECK(chooseTransport(comm, peer, &name, &handle));
    PeerConnection& conn = (*peers)[peer];
    SPCCL_CHECK(getTransport(name, &conn.net));
    SPCCL_CHECK(conn.net->connect(handle, &conn.sendComm));
    char where[128] = "?";
    conn.net->describe(conn.sendComm, where, sizeof(where));
    conn.name = "rank " + std::to_string(peer) + " (" + comm.ranks[peer].hostname + " " + where +
                ", " + name + ")";
    SPCCL_INFO(kLogNet, "rank %d: connecting to %s", comm.rank, conn.name.c_str());
    PendingHello& hello = hellos[peer];
    hello.header.kind = static_cast<uint16_t>(FrameKind::Hello);
    hello.header.commId = comm.commId;
    hello.header.srcRank = comm.rank;
    hello.header.length = comm.secret;
    SPCCL_CHECK(conn.net->isend(conn.sendComm, &hello.header, sizeof(FrameHeader), nullptr,
                                &hello.request));
  }

  int accepted = 0, helloSent = 0;
  std::vector<std::unique_ptr<PendingAccept>> pending;
  while (accepted < n - 1 || helloSent < n - 1) {
    for (Listener& listener : listeners) {
      for (;;) {
        void* recvComm = nullptr;
        SPCCL_CHECK(listener.net->accept(listener.comm, &recvComm));
        if (recvComm == nullptr) break;
        auto incoming = std::make_unique<PendingAccept>();
        incoming->net = listener.net;
        incoming->recvComm = recvComm;
        SPCCL_CHECK(listener.net->irecv(recvComm, incoming->buffer, sizeof(incoming->buffer),
                                        nullptr, &incoming->request));
        pending.push_back(std::move(incoming));
      }
    }
    for (size_t i = 0; i < pending.size();) {
      PendingAccept& incoming = *pending[i];
      int done = 0;
      size_t size = 0;
      char where[128] = "?";
      incoming.net->describe(incoming.recvComm, where, sizeof(where));
      spcclResult_t res = incoming.net->test(incoming.request, &done, &size);
      FrameHeader header;
      std::memcpy(&header, incoming.buffer, sizeof(header));
      bool valid = res == spcclSuccess && done && size == sizeof(FrameHeader) &&
                   header.magic == kFrameMagic &&
                   header.kind == static_cast<uint16_t>(FrameKind::Hello) &&
                   header.length == comm.secret && header.commId == comm.commId &&
                   header.srcRank >= 0 && header.srcRank < n && header.srcRank != comm.rank &&
                   (*peers)[header.srcRank].recvComm == nullptr;
      if (res == spcclSuccess && !done) {
        ++i;
        continue;
      }
      if (!valid) {
        SPCCL_WARN("rank %d refused a connection from %s: no valid hello with this job's secret",
                   comm.rank, where);
        incoming.net->closeRecv(incoming.recvComm);
      } else {
        (*peers)[header.srcRank].recvComm = incoming.recvComm;
        ++accepted;
      }
      pending.erase(pending.begin() + i);
    }
    helloSent = 0;
    for (int peer = 0; peer < n; ++peer) {
      if (peer == comm.rank) continue;
      PendingHello& hello = hellos[peer];
      if (hello.request != nullptr) {
        int done = 0;
        size_t size = 0;
        spcclResult_t res = (*peers)[peer].net->test(hello.request, &done, &size);
        if (res != spcclSuccess)
          return SPCCL_FAIL(spcclRemoteError, "rank %d could not connect to %s: %s", comm.rank,
                            (*peers)[peer].name.c_str(), threadLastError().c_str());
        if (done) hello.request = nullptr;
      }
      if (hello.request == nullptr) ++helloSent;
    }
    if (accepted == n - 1 && helloSent == n - 1) break;
    if (deadline.expired()) {
      std::string missing;
      for (int peer = 0; peer < n; ++peer)
        if (peer != comm.rank && (*peers)[peer].recvComm == nullptr)
          missing += (missing.empty() ? "" : ", ") + std::to_string(peer);
      return SPCCL_FAIL(spcclTimeout,
                        "rank %d: connection setup timed out after %d ms; no connection yet from "
                        "rank(s) %s",
                        comm.rank, comm.options.timeoutMs, missing.c_str());
    }
    std::vector<pollfd> fds;
    for (Listener& listener : listeners) {
      int fd = -1;
      short events = 0;
      listener.net->pollFd(listener.comm, &fd, &events);
      if (fd >= 0) fds.push_back({fd, POLLIN, 0});
    }
    for (auto& incoming : pending) {
      int fd = -1;
      short events = 0;
      incoming->net->pollFd(incoming->recvComm, &fd, &events);
      if (fd >= 0) fds.push_back({fd, POLLIN, 0});
    }
    ::poll(fds.data(), fds.size(), 5);
  }
  return spcclSuccess;
}

}  // namespace

spcclResult_t resolveCommOptions(const spcclConfig_t* config, CommOptions* out) {
  knobsEchoOnce();
  out->timeoutMs = static_cast<int>(knobInt("SPCCL_TIMEOUT_MS"));
  out->transport = knobString("SPCCL_TRANSPORT");
  out->socketIfname = knobString("SPCCL_SOCKET_IFNAME");
  out->profileLinks = knobInt("SPCCL_PROFILE_LINKS") != 0;
  out->algorithmOverride = knobString("SPCCL_ALGO");
  if (config != nullptr) {
    if (config->magic != SPCCL_CONFIG_MAGIC)
      return SPCCL_FAIL(spcclInvalidArgument,
                        "config: magic 0x%08x is wrong; initialise it with "
                        "SPCCL_CONFIG_INITIALIZER",
                        config->magic);
    size_t size = config->size;
    auto has = [size](size_t offset, size_t bytes) { return offset + bytes <= size; };
    if (has(offsetof(spcclConfig_t, timeoutMs), sizeof(int)) &&
        config->timeoutMs != SPCCL_CONFIG_UNDEF_INT)
      out->timeoutMs = config->timeoutMs;
    if (has(offsetof(spcclConfig_t, transport), sizeof(char*)) && config->transport != nullptr)
      out->transport = config->transport;
    if (has(offsetof(spcclConfig_t, socketIfname), sizeof(char*)) &&
        config->socketIfname != nullptr)
      out->socketIfname = config->socketIfname;
    if (has(offsetof(spcclConfig_t, profileLinks), sizeof(int)) &&
        config->profileLinks != SPCCL_CONFIG_UNDEF_INT)
      out->profileLinks = config->profileLinks != 0;
  }
  if (out->timeoutMs <= 0)
    return SPCCL_FAIL(spcclInvalidArgument, "timeout %d ms must be positive (SPCCL_TIMEOUT_MS)",
                      out->timeoutMs);
  if (out->transport.empty()) out->transport = "auto";
  return spcclSuccess;
}

spcclResult_t createComm(const UniqueIdContents& id, int nranks, int rank,
                         const CommOptions& options, spcclComm_t* out) {
  auto comm = std::make_unique<spcclComm>();
  comm->rank = rank;
  comm->nranks = nranks;
  comm->commId = id.commId;
  comm->sparseSeed = sparse::mix64(id.commId);
  comm->sparsePlanner = std::make_shared<sparse::PlannerState>();
  comm->sparseWorkspace = std::make_shared<sparse::SparseWorkspace>();
  comm->secret = id.secret;
  comm->options = options;

  RankInfo mine;
  mine.rank = rank;
  mine.nranks = nranks;
  mine.pid = getpid();
  mine.hostId = localHostId();
  gethostname(mine.hostname, sizeof(mine.hostname) - 1);
  std::snprintf(mine.transport, sizeof(mine.transport), "%s", options.transport.c_str());

  std::vector<Listener> listeners;
  auto closeListeners = [&listeners] {
    for (Listener& l : listeners) l.net->closeListen(l.comm);
    listeners.clear();
  };
  spcclResult_t res = spcclSuccess;
  if (nranks > 1) {
    if (wantsTransport(options.transport, "tcp")) res = openListener("tcp", mine.tcpHandle, &listeners);
    if (res == spcclSuccess && wantsTransport(options.transport, "shm"))
      res = openListener("shm", mine.shmHandle, &listeners);
    if (res == spcclSuccess && options.transport != "auto" && options.transport != "tcp" &&
        options.transport != "shm")
      res = openListener(options.transport, mine.pluginHandle, &listeners);
  }
  if (res == spcclSuccess) res = exchangeRankInfo(id, mine, options.timeoutMs, &comm->ranks);
  if (res == spcclSuccess) {
    for (int r = 0; r < nranks; ++r) {
      if (std::strncmp(comm->ranks[r].transport, mine.transport, sizeof(mine.transport)) != 0) {
        res = SPCCL_FAIL(spcclInvalidUsage,
                         "rank %d uses SPCCL_TRANSPORT=%s but rank %d uses %s: all ranks must "
                         "agree",
                         r, comm->ranks[r].transport, rank, mine.transport);
        break;
      }
    }
  }
  std::vector<PeerConnection> peers;
  if (res == spcclSuccess && nranks > 1) res = connectMesh(*comm, listeners, &peers);
  closeListeners();
  if (res != spcclSuccess) {
    for (PeerConnection& p : peers) {
      if (p.sendComm) p.net->closeSend(p.sendComm);
      if (p.recvComm) p.net->closeRecv(p.recvComm);
    }
    return res;
  }
  if (peers.empty()) peers.resize(nranks);
  EngineSettings settings;
  settings.rank = rank;
  settings.nranks = nranks;
  settings.commId = comm->commId;
  settings.timeoutMs = options.timeoutMs;
  settings.chunkBytes = static_cast<size_t>(std::max<int64_t>(knobInt("SPCCL_CHUNK_BYTES"), 4096));
  settings.checkRoots = knobInt("SPCCL_CHECK_ROOTS") != 0;
  comm->engine = std::make_unique<Engine>(settings, std::move(peers));
  if (options.profileLinks && nranks > 1) SPCCL_CHECK(profileLinks(*comm));
  SPCCL_INFO(kLogInit, "rank %d/%d ready: comm %016" PRIx64 ", transport %s, alpha %.1f us, "
             "bandwidth %.3f GB/s%s",
             rank, nranks, comm->commId, options.transport.c_str(),
             comm->engine->linkModel().alphaSeconds * 1e6,
             1e-9 / comm->engine->linkModel().betaSecondsPerByte,
             comm->engine->linkModel().measured ? " (measured)" : " (defaults)");
  *out = comm.release();
  return spcclSuccess;
}

void destroyComm(spcclComm_t comm, bool abort) {
  if (comm == nullptr) return;
  {
    std::unique_lock<std::mutex> lock(comm->queueMutex);
    comm->stopping = true;
    if (abort) {
      for (auto& item : comm->queue) {
        std::lock_guard<std::mutex> requestLock(item.second->state.mutex);
        item.second->state.done = true;
        item.second->state.result = spcclRemoteError;
        item.second->state.error = "communicator aborted";
        item.second->state.cv.notify_all();
      }
      comm->queue.clear();
    }
  }
  comm->queueCv.notify_all();
  if (abort && comm->engine) comm->engine->abort(spcclRemoteError, "spcclCommAbort was called");
  if (comm->worker.joinable()) comm->worker.join();
  delete comm;
}

spcclResult_t runBlocking(spcclComm_t comm, const std::function<spcclResult_t()>& fn) {
  {
    std::unique_lock<std::mutex> lock(comm->queueMutex);
    comm->queueCv.wait(lock, [comm] { return comm->queue.empty() && !comm->workerRunning; });
  }
  std::lock_guard<std::mutex> exec(comm->execMutex);
  return fn();
}

spcclResult_t runAsync(spcclComm_t comm, std::function<spcclResult_t()> fn,
                       spcclRequest_t* request) {
  auto* req = new spcclRequest();
  req->comm = comm;
  {
    std::lock_guard<std::mutex> lock(comm->queueMutex);
    comm->queue.emplace_back(std::move(fn), req);
    if (!comm->worker.joinable()) {
      comm->worker = std::thread([comm] {
        std::unique_lock<std::mutex> lock(comm->queueMutex);
        for (;;) {
          comm->queueCv.wait(lock, [comm] { return comm->stopping || !comm->queue.empty(); });
          if (comm->queue.empty()) return;
          auto item = std::move(comm->queue.front());
          comm->queue.pop_front();
          comm->workerRunning = true;
          lock.unlock();
          spcclResult_t result;
          std::string error;
          {
            std::lock_guard<std::mutex> exec(comm->execMutex);
            clearThreadLastError();
            result = item.first();
            error = threadLastError();
          }
          {
            std::lock_guard<std::mutex> requestLock(item.second->state.mutex);
            item.second->state.done = true;
            item.second->state.result = result;
            item.second->state.error = error;
          }
          item.second->state.cv.notify_all();
          lock.lock();
          comm->workerRunning = false;
          comm->queueCv.notify_all();
        }
      });
    }
  }
  comm->queueCv.notify_all();
  *request = req;
  return spcclSuccess;
}

}  // namespace spccl
