#include "core/comm.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <new>
#include <thread>

#include "base/check.h"
#include "base/clock.h"
#include "base/knobs.h"
#include "base/versioned_struct.h"
#include "coll/device_all_reduce.h"
#include "core/comm_init.h"
#include "core/comm_report.h"
#include "core/comm_tls.h"
#include "core/fault_service.h"
#include "core/link_profile.h"
#include "core/revoke.h"
#include "core/setup_departures.h"
#include "core/transport_registry.h"
#include "device/cuda_driver.h"
#include "device/peer_access.h"
#include "runtime/flight_recorder.h"
#include "runtime/frame_checksum.h"
#include "sparse/comm_state.h"

namespace spccl {

namespace {

// Enough to fill a NIC from several sockets or QPs; more only adds
// connections (n - 1 per lane per rank).
constexpr int kMaxConnsPerRail = 16;
// A rank that fails after the rendezvous gives the root it runs this long to
// reply to the other ranks (bootstrap.h: waitForRendezvousRoot).
constexpr int64_t kRootReplyWaitMs = 2000;

// A listening endpoint of one transport on one of its devices.
struct Listener {
  const spcclNet_v2_t* net = nullptr;
  void* comm = nullptr;
};

// An accepted connection whose hello has not arrived yet.
struct PendingAccept {
  const spcclNet_v2_t* net = nullptr;
  void* recvComm = nullptr;
  void* request = nullptr;
  std::string peer, source;  // host:port and host, for refusals
  int64_t acceptedMs = 0;
  alignas(8) unsigned char buffer[sizeof(LaneHello) + kMaxAbortText];

  PendingAccept() = default;
  PendingAccept(const PendingAccept&) = delete;
  PendingAccept& operator=(const PendingAccept&) = delete;
  // A connection not handed to a lane is closed with it: refused, or left
  // over when connection setup ends, early returns included.
  ~PendingAccept() {
    if (recvComm != nullptr) net->closeRecv(recvComm);
  }
};

HandshakeContext laneContext(const spcclComm& comm, int src, int dst, uint32_t step) {
  HandshakeContext context;
  context.role = HandshakeRole::DataConnect;
  context.commId = comm.commId;
  context.srcRank = src;
  context.dstRank = dst;
  context.lane = step;
  return context;
}

Nonce laneNonceOf(const RankInfo& info) {
  Nonce nonce;
  std::memcpy(nonce.data(), info.laneNonce, nonce.size());
  return nonce;
}

struct PendingHello {
  int peer = -1;
  void* request = nullptr;
  LaneHello hello;
};

// FrameHeader::step of the hello that opens a control connection (other
// hellos carry their lane's index).
constexpr uint32_t kControlHelloStep = 0xffffffffu;

Lane& laneOfHello(PeerConnection& conn, uint32_t step) {
  return step == kControlHelloStep ? conn.control : conn.lanes[step];
}

bool wantsTransport(const std::string& setting, const char* name) {
  return setting == "auto" ? (std::strcmp(name, "tcp") == 0 || std::strcmp(name, "shm") == 0)
                           : setting == name;
}

spcclResult_t openListener(const std::string& name, int dev, unsigned char* handle,
                           std::vector<Listener>* listeners) {
  Listener listener;
  SPCCL_CHECK(getTransport(name, &listener.net));
  SPCCL_CHECK(listener.net->listen(dev, handle, &listener.comm));
  listeners->push_back(listener);
  return spcclSuccess;
}

// The network transport (tcp or a plugin) listens on each of its devices:
// they are this rank's rails.
spcclResult_t openNetworkListeners(const std::string& name, RankInfo* mine,
                                   std::vector<Listener>* listeners,
                                   std::vector<std::string>* deviceNames) {
  const spcclNet_v2_t* net = nullptr;
  SPCCL_CHECK(getTransport(name, &net));
  int devices = 0;
  SPCCL_CHECK(net->devices(&devices));
  if (devices < 1 || devices > SPCCL_NET_MAX_DEVICES)
    return SPCCL_FAIL(spcclInternalError, "transport %s reports %d devices (expected 1..%d)",
                      name.c_str(), devices, SPCCL_NET_MAX_DEVICES);
  for (int dev = 0; dev < devices; ++dev) {
    SPCCL_CHECK(openListener(name, dev, mine->netHandles[dev], listeners));
    spcclNetProperties_v2_t props{};
    if (net->getProperties(dev, &props) == spcclSuccess)
      SPCCL_INFO(kLogNet, "rank %d: %s rail %d on %s (%d Mbit/s%s%s)", mine->rank, name.c_str(),
                 dev, props.name, props.speedMbps, props.pciPath[0] ? ", " : "", props.pciPath);
    deviceNames->push_back(props.name[0] ? props.name : "device " + std::to_string(dev));
  }
  mine->netDevices = devices;
  return spcclSuccess;
}

// How a rank reaches a peer; both ends compute the same answer from the
// shared rank table.
struct Route {
  std::string transport;
  const unsigned char* handles[SPCCL_NET_MAX_DEVICES] = {};  // the peer's, per rail
  int rails = 1;
  int connsPerRail = 1;
  int lanes() const { return rails * connsPerRail; }
  // Lane l uses rail l % rails: consecutive lanes spread over the devices.
  int railOf(int lane) const { return lane % rails; }
};

spcclResult_t routeTo(const spcclComm& comm, int peer, Route* route) {
  const RankInfo& them = comm.ranks[peer];
  const RankInfo& me = comm.ranks[comm.rank];
  const std::string& setting = comm.options.transport;
  bool sameHost = them.hostId == me.hostId;
  if (setting == "auto") {
    route->transport = sameHost ? "shm" : "tcp";
  } else if ((setting == "shm" || setting == "cuda_ipc") && !sameHost) {
    return SPCCL_FAIL(spcclInvalidUsage,
                      "SPCCL_TRANSPORT=%s, but rank %d is on host %s and rank %d on host %s",
                      setting.c_str(), peer, them.hostname, comm.rank, me.hostname);
  } else {
    route->transport = setting;
  }
  if (route->transport == "shm") {
    route->handles[0] = them.shmHandle;
    return spcclSuccess;
  }
  route->rails = std::min(me.netDevices, them.netDevices);
  route->connsPerRail = std::min(me.connsPerRail, them.connsPerRail);
  if (route->rails < 1 || route->connsPerRail < 1)
    return SPCCL_FAIL(spcclInternalError, "rank %d published %d rails and %d connections per rail",
                      route->rails < 1 ? peer : comm.rank, route->rails, route->connsPerRail);
  for (int r = 0; r < route->rails; ++r) route->handles[r] = them.netHandles[r];
  return spcclSuccess;
}

// How this rank reaches its peers, for its Init COMPLETE line.
PeerLinks summarizeLinks(const spcclComm& comm, std::vector<std::string> devices) {
  PeerLinks links;
  links.devices = std::move(devices);
  for (int peer = 0; peer < comm.nranks; ++peer) {
    Route route;
    if (peer == comm.rank || routeTo(comm, peer, &route) != spcclSuccess) continue;
    if (route.transport == "shm") {
      ++links.shmPeers;
      continue;
    }
    links.network = route.transport;
    links.fewestRails =
        links.networkPeers == 0 ? route.rails : std::min(links.fewestRails, route.rails);
    links.mostRails = std::max(links.mostRails, route.rails);
    links.connsPerRail = links.networkPeers == 0 ? route.connsPerRail
                                                 : std::min(links.connsPerRail, route.connsPerRail);
    ++links.networkPeers;
  }
  return links;
}

// A rank that could not open its transport still takes part in the
// rendezvous, with the reason, so that every rank fails at once naming it
// instead of waiting for it until the deadline.
void publishSetupFailure(spcclResult_t failure, RankInfo* mine) {
  mine->setupResult = failure;
  std::snprintf(mine->setupError, sizeof(mine->setupError), "%s", threadLastError().c_str());
}

spcclResult_t checkEveryRankSetUp(const std::vector<RankInfo>& ranks, int me) {
  for (const RankInfo& info : ranks) {
    if (info.rank == me || info.setupResult == spcclSuccess) continue;
    return SPCCL_FAIL(static_cast<spcclResult_t>(info.setupResult),
                      "rank %d (host %s) could not set up its transport: %s", info.rank,
                      info.hostname, info.setupError);
  }
  return spcclSuccess;
}

// Connects every lane to `peer`, and the control connection (on rail 0),
// and queues a hello on each: the receiver learns rank and lane from it
// (FrameHeader::step).
spcclResult_t connectLanes(spcclComm& comm, int peer, PeerConnection* conn,
                           std::vector<PendingHello>* hellos) {
  Route route;
  SPCCL_CHECK(routeTo(comm, peer, &route));
  SPCCL_CHECK(getTransport(route.transport, &conn->net));
  conn->lanes.assign(route.lanes(), Lane{});
  for (int l = -1; l < route.lanes(); ++l) {
    uint32_t step = l < 0 ? kControlHelloStep : static_cast<uint32_t>(l);
    int rail = l < 0 ? 0 : route.railOf(l);
    // Only the network transport has several devices; shm's is 0.
    SPCCL_CHECK(conn->net->connect(rail, route.handles[rail], &laneOfHello(*conn, step).sendComm));
    SPCCL_CHECK(secureTcpComm(comm, conn->net, laneOfHello(*conn, step).sendComm, peer));
    PendingHello hello;
    hello.peer = peer;
    FrameHeader& header = hello.hello.header;
    header.kind = static_cast<uint16_t>(FrameKind::Hello);
    header.commId = comm.commId;
    header.srcRank = comm.rank;
    header.step = step;
    SPCCL_CHECK(freshNonce(&hello.hello.nonce));
    SPCCL_CHECK(handshakeMac(comm.secret, laneContext(comm, comm.rank, peer, step),
                             laneNonceOf(comm.ranks[peer]), hello.hello.nonce, &header,
                             sizeof(header), &hello.hello.mac));
    hellos->push_back(hello);
  }
  char where[128] = "?";
  conn->net->describe(conn->lanes[0].sendComm, where, sizeof(where));
  conn->name = "rank " + std::to_string(peer) + " (" + comm.ranks[peer].hostname + " " + where +
               ", " + route.transport + ")";
  SPCCL_INFO(kLogNet, "rank %d: connecting to %s over %d lane(s): %d rail(s) x %d", comm.rank,
             conn->name.c_str(), route.lanes(), route.rails, route.connsPerRail);
  return spcclSuccess;
}

// "host:port" -> "host" ("[v6]:port" -> "[v6]").
std::string sourceOf(const std::string& where) {
  size_t colon = where.rfind(':');
  return colon == std::string::npos ? where : where.substr(0, colon);
}

// The connections of setup so far that are known to be up: a send comm
// once its hello went out, every accepted one.
std::vector<SetupConnection> establishedConnections(const std::vector<PeerConnection>& peers,
                                                    const std::vector<PendingHello>& hellos) {
  std::vector<SetupConnection> out;
  for (const PendingHello& hello : hellos) {
    if (hello.request != nullptr) continue;
    const uint32_t step = hello.hello.header.step;
    const PeerConnection& conn = peers[hello.peer];
    const Lane& lane = step == kControlHelloStep ? conn.control : conn.lanes[step];
    out.push_back({hello.peer, conn.net, lane.sendComm, true, step});
  }
  for (size_t peer = 0; peer < peers.size(); ++peer) {
    const PeerConnection& conn = peers[peer];
    if (conn.net == nullptr) continue;
    out.push_back(
        {static_cast<int>(peer), conn.net, conn.control.recvComm, false, kControlHelloStep});
    for (size_t l = 0; l < conn.lanes.size(); ++l)
      out.push_back({static_cast<int>(peer), conn.net, conn.lanes[l].recvComm, false,
                     static_cast<unsigned>(l)});
  }
  return out;
}

// Whether every connection between this rank and `peer` is up: the
// peer's lanes and control connection accepted here, this rank's hellos to
// it sent.
bool setupCompleteWith(int peer, const PeerConnection& conn,
                       const std::vector<PendingHello>& hellos) {
  if (conn.control.recvComm == nullptr) return false;
  for (const Lane& lane : conn.lanes)
    if (lane.recvComm == nullptr) return false;
  return std::none_of(hellos.begin(), hellos.end(), [peer](const PendingHello& hello) {
    return hello.peer == peer && hello.request != nullptr;
  });
}

// The established connections to peers whose setup with this rank is not
// complete: a peer whose connections are all up may end its own setup and
// close them at once (a rank that destroys its communicator right after
// init), which is no failure of this rank's setup.
std::vector<SetupConnection> watchedForDepartures(const std::vector<PeerConnection>& peers,
                                                  const std::vector<PendingHello>& hellos) {
  std::vector<SetupConnection> watched = establishedConnections(peers, hellos);
  std::erase_if(watched, [&](const SetupConnection& c) {
    return setupCompleteWith(c.peer, peers[c.peer], hellos);
  });
  return watched;
}

spcclResult_t connectMesh(spcclComm& comm, std::vector<Listener>& listeners,
                          std::vector<PeerConnection>* peers, const std::atomic<bool>* cancel) {
  const int n = comm.nranks;
  Deadline deadline(comm.options.timeoutMs, cancel);
  peers->assign(n, PeerConnection{});
  std::vector<PendingHello> hellos;
  int expected = 0;  // lanes from every peer: as many as this rank opens to it
  for (int peer = 0; peer < n; ++peer) {
    if (peer == comm.rank) continue;
    PeerConnection& conn = (*peers)[peer];
    SPCCL_CHECK(connectLanes(comm, peer, &conn, &hellos));
    expected += static_cast<int>(conn.lanes.size()) + 1;  // and the control connection
  }
  // Posted once `hellos` stops growing: the requests point into it.
  for (PendingHello& hello : hellos) {
    PeerConnection& conn = (*peers)[hello.peer];
    SPCCL_CHECK(conn.net->isend(laneOfHello(conn, hello.hello.header.step).sendComm, &hello.hello,
                                sizeof(LaneHello), nullptr, &hello.request));
  }

  // A failure from here on is told to the peers before this rank closes
  // (core/setup_departures.h).
  auto leave = [&](spcclResult_t failure) {
    const std::string why = threadLastError();
    tellPeersWhy(comm.rank, comm.commId, failure, why, establishedConnections(*peers, hellos));
    setThreadLastError(why);
    return failure;
  };
  int accepted = 0, helloSent = 0;
  int64_t departureSeenMs = -1;  // when a watched peer was first seen gone
  const int hellosToSend = static_cast<int>(hellos.size());
  const int64_t handshakeMs = knobInt("SPCCL_HANDSHAKE_TIMEOUT_MS");
  // Every peer may share one source address (ranks of one host, NAT), so
  // the connections this rank expects come on top of the cap.
  const size_t perSource =
      static_cast<size_t>(std::max<int64_t>(1, knobInt("SPCCL_MAX_UNAUTH_PER_SOURCE"))) +
      static_cast<size_t>(expected);
  std::vector<std::unique_ptr<PendingAccept>> pending;
  std::map<std::string, size_t> refusals;  // by source address
  auto refuse = [&](PendingAccept& incoming, const char* reason) {
    if (refusals[incoming.source]++ == 0)
      SPCCL_WARN("rank %d refused a connection from %s: %s (further refusals from %s are counted)",
                 comm.rank, incoming.peer.c_str(), reason, incoming.source.c_str());
    // Closed when it leaves `pending` (~PendingAccept).
  };
  while (accepted < expected || helloSent < hellosToSend) {
    for (Listener& listener : listeners) {
      for (;;) {
        void* recvComm = nullptr;
        SPCCL_CHECK(listener.net->accept(listener.comm, &recvComm));
        if (recvComm == nullptr) break;
        auto incoming = std::make_unique<PendingAccept>();
        incoming->net = listener.net;
        incoming->recvComm = recvComm;
        char where[128] = "?";
        listener.net->describe(recvComm, where, sizeof(where));
        incoming->peer = where;
        incoming->source = sourceOf(where);
        incoming->acceptedMs = monotonicMs();
        // Over the cap, the source's oldest unauthenticated connection
        // makes room (a rank's hello arrives right after its connect).
        size_t fromSource = 0;
        for (auto& p : pending) fromSource += p->source == incoming->source;
        if (fromSource >= perSource) {
          auto oldest = std::find_if(pending.begin(), pending.end(),
                                     [&](auto& p) { return p->source == incoming->source; });
          refuse(**oldest, "too many unauthenticated connections from this address");
          pending.erase(oldest);
        }
        SPCCL_CHECK(listener.net->irecv(recvComm, incoming->buffer, sizeof(incoming->buffer),
                                        nullptr, &incoming->request));
        pending.push_back(std::move(incoming));
      }
    }
    const int64_t now = monotonicMs();
    for (size_t i = 0; i < pending.size();) {
      PendingAccept& incoming = *pending[i];
      int done = 0;
      size_t size = 0;
      spcclResult_t res = incoming.net->test(incoming.request, &done, &size);
      if (res == spcclSuccess && !done) {
        // An overdue connection is dropped only while more are pending than
        // this rank still expects: a rank's hello goes out once it has
        // connected to every peer, which under load (UCX endpoint creation,
        // a sanitizer) can take longer than the deadline, and a dropped lane
        // would fail the whole init. Squatters crowd past that count.
        const bool crowded = pending.size() > static_cast<size_t>(expected - accepted);
        if (now - incoming.acceptedMs <= handshakeMs || !crowded) {
          ++i;
          continue;
        }
        refuse(incoming, "no hello within SPCCL_HANDSHAKE_TIMEOUT_MS");
      } else if (res != spcclSuccess || !acceptsHello(comm, *peers, incoming.buffer, size)) {
        refuse(incoming,
               "no valid hello for a lane it expects (wrong job secret, communicator or "
               "protocol)");
      } else {
        const FrameHeader& header = *reinterpret_cast<const FrameHeader*>(incoming.buffer);
        // The hello proved the job secret: a certificate that names
        // another host is a rank's misconfiguration, reported at once.
        spcclResult_t tls = checkTlsPeer(comm, incoming.net, incoming.recvComm, header.srcRank);
        if (tls != spcclSuccess) return tls;  // `pending` closes what it holds
        laneOfHello((*peers)[header.srcRank], header.step).recvComm = incoming.recvComm;
        incoming.recvComm = nullptr;  // the lane's now
        ++accepted;
      }
      pending.erase(pending.begin() + static_cast<ptrdiff_t>(i));
    }
    // Every hello that failed is named, not only the first: a survivor
    // whose own creation failed (it closed its listener) may be met before
    // the rank that really left, and the message must name that one too.
    // So after a failure the other hellos in flight get kSettleMs to fail
    // as well.
    std::string failures;
    std::vector<bool> failedPeer(static_cast<size_t>(n), false);
    // Tests the hellos still in flight; returns whether any is left.
    auto testHellos = [&] {
      helloSent = 0;
      bool inFlight = false;
      for (PendingHello& hello : hellos) {
        if (hello.request != nullptr && !failedPeer[static_cast<size_t>(hello.peer)]) {
          int done = 0;
          size_t size = 0;
          spcclResult_t res = (*peers)[hello.peer].net->test(hello.request, &done, &size);
          if (res != spcclSuccess) {
            std::string why = threadLastError();
            std::string reason = departureReason((*peers)[hello.peer], comm.commId);
            const uint32_t step = hello.hello.header.step;
            std::string lane =
                step == kControlHelloStep ? "control connection" : "lane " + std::to_string(step);
            failures.append(failures.empty() ? "" : "; nor to ")
                .append((*peers)[hello.peer].name)
                .append(" (")
                .append(lane)
                .append("): ")
                .append(why);
            if (!reason.empty()) failures.append("; it said: ").append(reason);
            failedPeer[static_cast<size_t>(hello.peer)] = true;
            continue;
          }
          if (done) hello.request = nullptr;
          inFlight |= hello.request != nullptr;
        }
        if (hello.request == nullptr) ++helloSent;
      }
      return inFlight;
    };
    bool inFlight = testHellos();
    if (!failures.empty()) {
      constexpr int kSettleMs = 50;
      const auto settled = std::chrono::steady_clock::now() + std::chrono::milliseconds(kSettleMs);
      while (inFlight && std::chrono::steady_clock::now() < settled) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        inFlight = testHellos();
      }
      return leave(SPCCL_FAIL(spcclRemoteError, "rank %d could not connect to %s", comm.rank,
                              failures.c_str()));
    }
    if (accepted == expected && helloSent == hellosToSend) {
      for (auto& incoming : pending) refuse(*incoming, "connection setup ended first");
      if (!refusals.empty()) {
        std::string list;
        size_t total = 0;
        for (const auto& [source, count] : refusals) {
          total += count;
          list += (list.empty() ? "" : ", ") + source + " x" + std::to_string(count);
        }
        SPCCL_WARN("rank %d refused %zu connection(s) during setup from %zu address(es): %s",
                   comm.rank, total, refusals.size(), list.c_str());
      }
      break;
    }
    // A peer that leaves now fails every rank at once, not at the deadline;
    // after kDepartureSettleMs, since a peer that ended its setup and left
    // may have hellos still unread here (they complete it: see
    // watchedForDepartures).
    if (spcclResult_t res = checkSetupDepartures(comm.rank, comm.commId, *peers,
                                                 watchedForDepartures(*peers, hellos));
        res != spcclSuccess) {
      constexpr int64_t kDepartureSettleMs = 500;
      if (departureSeenMs < 0) departureSeenMs = monotonicMs();
      if (monotonicMs() - departureSeenMs >= kDepartureSettleMs) return leave(res);
    } else {
      departureSeenMs = -1;
    }
    if (deadline.expired()) {
      std::string missing;
      for (int peer = 0; peer < n; ++peer) {
        if (peer == comm.rank) continue;
        const PeerConnection& conn = (*peers)[peer];
        bool complete = conn.control.recvComm != nullptr &&
                        std::all_of(conn.lanes.begin(), conn.lanes.end(),
                                    [](const Lane& lane) { return lane.recvComm != nullptr; });
        if (!complete) missing += (missing.empty() ? "" : ", ") + std::to_string(peer);
      }
      return leave(SPCCL_FAIL(spcclTimeout,
                              "rank %d: connection setup timed out after %d ms; no connection yet "
                              "from rank(s) %s",
                              comm.rank, comm.options.timeoutMs, missing.c_str()));
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

bool acceptsHello(const spcclComm& comm, std::vector<PeerConnection>& peers,
                  const unsigned char* buffer, size_t size) {
  LaneHello hello;
  if (size != sizeof(hello)) return false;
  std::memcpy(&hello, buffer, sizeof(hello));
  const FrameHeader& header = hello.header;
  if (header.magic != kFrameMagic || header.kind != static_cast<uint16_t>(FrameKind::Hello) ||
      header.commId != comm.commId || header.srcRank < 0 || header.srcRank >= comm.nranks ||
      header.srcRank == comm.rank)
    return false;
  PeerConnection& from = peers[header.srcRank];
  if (header.step != kControlHelloStep && header.step >= from.lanes.size()) return false;
  Mac expected{};
  if (handshakeMac(comm.secret, laneContext(comm, header.srcRank, comm.rank, header.step),
                   laneNonceOf(comm.ranks[comm.rank]), hello.nonce, &header, sizeof(header),
                   &expected) != spcclSuccess ||
      !macEqual(expected, hello.mac))
    return false;
  return laneOfHello(from, header.step).recvComm == nullptr;
}

spcclResult_t resolveCommOptions(const spcclConfig_t* config, CommOptions* out) {
  knobsEchoOnce();
  out->timeoutMs = static_cast<int>(knobInt("SPCCL_TIMEOUT_MS"));
  out->transport = knobString("SPCCL_TRANSPORT");
  out->socketIfname = knobString("SPCCL_SOCKET_IFNAME");
  out->profileLinks = knobInt("SPCCL_PROFILE_LINKS") != 0;
  out->algorithmOverride = knobString("SPCCL_ALGO");
  out->blocking = knobInt("SPCCL_COMM_BLOCKING") != 0;
  if (config != nullptr) {
    // The size is not checked: a config shorter than its header reads as
    // one that sets nothing.
    const VersionedStruct<spcclConfig_t> in(
        *config, {"config", "size", "magic", "it", "SPCCL_CONFIG_INITIALIZER"});
    SPCCL_CHECK(in.checkMagic(SPCCL_CONFIG_MAGIC));
    if (in.has(&spcclConfig_t::timeoutMs) && config->timeoutMs != SPCCL_CONFIG_UNDEF_INT)
      out->timeoutMs = config->timeoutMs;
    if (in.has(&spcclConfig_t::transport) && config->transport != nullptr) {
      out->transport = config->transport;
      out->transportOrigin = "spcclConfig_t.transport";
    }
    if (in.has(&spcclConfig_t::socketIfname) && config->socketIfname != nullptr)
      out->socketIfname = config->socketIfname;
    if (in.has(&spcclConfig_t::profileLinks) && config->profileLinks != SPCCL_CONFIG_UNDEF_INT)
      out->profileLinks = config->profileLinks != 0;
    if (in.has(&spcclConfig_t::blocking) && config->blocking != SPCCL_CONFIG_UNDEF_INT)
      out->blocking = config->blocking != 0;
  }
  if (out->timeoutMs <= 0)
    return SPCCL_FAIL(spcclInvalidArgument, "timeout %d ms must be positive (SPCCL_TIMEOUT_MS)",
                      out->timeoutMs);
  if (out->transport.empty()) out->transport = "auto";
  return spcclSuccess;
}

std::unique_ptr<spcclComm> newComm(const UniqueIdContents& id, int nranks, int rank,
                                   const CommOptions& options) {
  auto comm = std::make_unique<spcclComm>();
  comm->errorSink = std::make_shared<LastErrorSink>();
  comm->errorSink->comm = comm.get();
  comm->rank = rank;
  comm->nranks = nranks;
  comm->cudaDevice = device::currentCudaDevice();
  if (comm->cudaDevice >= 0) device::describeCurrentDevice(&comm->cudaDevicePeers);
  comm->commId = id.commId;
  comm->sparse = std::make_shared<sparse::CommState>(id.commId);
  comm->secret = id.secret;
  comm->options = options;
  return comm;
}

spcclResult_t setUpComm(spcclComm* comm, const UniqueIdContents& id, CommInit* init) {
  const CommOptions& options = comm->options;
  const int rank = comm->rank;
  const int nranks = comm->nranks;
  const std::atomic<bool>* cancel = init != nullptr ? &init->cancel : nullptr;

  RankInfo mine;
  mine.rank = rank;
  mine.nranks = nranks;
  mine.pid = getpid();
  mine.hostId = localHostId();
  gethostname(mine.hostname, sizeof(mine.hostname) - 1);
  mine.job = localJobSettings(options);
  mine.deviceAllReduceReady =
      comm->cudaDevice >= 0 && comm->cudaDevicePeers.self != 0 && deviceAllReduceAvailable() ? 1
                                                                                             : 0;
  mine.devicePeers = comm->cudaDevicePeers;
  Nonce laneNonce;
  SPCCL_CHECK(freshNonce(&laneNonce));
  std::memcpy(mine.laneNonce, laneNonce.data(), laneNonce.size());

  std::vector<Listener> listeners;
  auto closeListeners = [&listeners] {
    for (Listener& l : listeners) l.net->closeListen(l.comm);
    listeners.clear();
  };
  spcclResult_t res = spcclSuccess;
  std::vector<std::string> deviceNames;
  if (nranks > 1) {
    // "auto" listens on tcp and shm; a named network transport (tcp or a
    // plugin) listens on its devices; "shm" on shm alone.
    mine.connsPerRail = static_cast<int32_t>(knobInt("SPCCL_NET_CONNS_PER_RAIL"));
    if (mine.connsPerRail < 1 || mine.connsPerRail > kMaxConnsPerRail)
      res = SPCCL_FAIL(spcclInvalidArgument, "SPCCL_NET_CONNS_PER_RAIL=%d: expected 1..%d",
                       mine.connsPerRail, kMaxConnsPerRail);
    bool checksum = false;
    if (res == spcclSuccess) res = parseWireChecksum(knobString("SPCCL_WIRE_CHECKSUM"), &checksum);
    std::string network = options.transport == "auto" ? "tcp" : options.transport;
    if (res == spcclSuccess) res = makeCommTls(comm, network);
    if (res == spcclSuccess && network != "shm") {
      res = openNetworkListeners(network, &mine, &listeners, &deviceNames);
      for (Listener& l : listeners)
        if (res == spcclSuccess) res = secureTcpComm(*comm, l.net, l.comm, -1);
      // A transport the user named never silently becomes another one.
      if (res != spcclSuccess && options.transport != "auto")
        setThreadLastError(options.transportOrigin + "=" + options.transport + ": " +
                           threadLastError());
    }
    if (res == spcclSuccess && wantsTransport(options.transport, "shm"))
      res = openListener("shm", 0, mine.shmHandle, &listeners);
    if (res != spcclSuccess) publishSetupFailure(res, &mine);
  }
  auto fault = std::make_shared<FaultService>();
  if (res == spcclSuccess) {
    res = fault->listen(&mine.faultAddr);
    if (res != spcclSuccess) publishSetupFailure(res, &mine);
  }
  const spcclResult_t setup = res;
  // NOLINTNEXTLINE(performance-unnecessary-copy-initialization): exchangeRankInfo overwrites it
  const std::string setupError = threadLastError();
  res = exchangeRankInfo(id, mine, options.timeoutMs, &comm->ranks, cancel);
  // The root still waits for a rank: it has no replies to send soon.
  const bool rendezvousTimedOut = res == spcclTimeout;
  if (setup != spcclSuccess) {
    res = setup;  // this rank's own reason, not what the rendezvous said after it
    setThreadLastError(setupError);
  }
  if (res == spcclSuccess) res = checkEveryRankSetUp(comm->ranks, rank);
  if (res == spcclSuccess) res = checkJobSettingsAgree(comm->ranks, rank);
  std::vector<PeerConnection> peers;
  if (res == spcclSuccess && nranks > 1) res = connectMesh(*comm, listeners, &peers, cancel);
  closeListeners();
  if (res != spcclSuccess) {
    for (PeerConnection& p : peers) closePeerConnection(p);
    // Not when aborted (the caller waits for this thread, and the root's
    // other ranks are no concern of it any more), nor when the rendezvous
    // timed out.
    const bool aborted = cancel != nullptr && cancel->load();
    if (!aborted && !rendezvousTimedOut) waitForRendezvousRoot(id.commId, kRootReplyWaitMs);
    return res;
  }
  if (peers.empty()) peers.resize(nranks);
  EngineSettings settings;
  settings.rank = rank;
  settings.nranks = nranks;
  settings.commId = comm->commId;
  settings.timeoutMs = options.timeoutMs;
  settings.chunkBytes = static_cast<size_t>(mine.job.chunkBytes);
  settings.stagingChunkBytes = static_cast<size_t>(mine.job.stagingChunkBytes);
  settings.sparsePieceBytes = static_cast<size_t>(mine.job.sparsePieceBytes);
  settings.compressPieceBytes = static_cast<size_t>(mine.job.compressPieceBytes);
  settings.checkRoots = mine.job.checkRoots != 0;
  settings.denseAlgorithm = options.algorithmOverride;
  settings.stripeMinBytes = static_cast<size_t>(mine.job.stripeMinBytes);
  settings.flightRecords = flightRecorderCapacity();
  settings.wireChecksum = std::string(mine.job.wireChecksum) == "crc32c";
  auto engine = std::make_unique<Engine>(settings, std::move(peers));
  if (init != nullptr) {
    // Published under the creation's lock: an abort from now on stops the
    // engine (link profiling below talks to the peers), one before it
    // stops the creation here.
    std::lock_guard<std::mutex> lock(init->mutex);
    if (init->cancel.load()) return SPCCL_FAIL(spcclRemoteError, "rank %d: creation aborted", rank);
    comm->engine = std::move(engine);
  } else {
    comm->engine = std::move(engine);
  }
  std::vector<net::SockAddr> faultAddrs;
  for (const RankInfo& info : comm->ranks) faultAddrs.push_back(info.faultAddr);
  fault->start(FaultChannelKeys{comm->commId, rank, comm->secret}, std::move(faultAddrs),
               options.timeoutMs);
  comm->engine->setInterrupt(fault->revokedFd(), [fault, rank] {
    if (!fault->revoked()) return spcclSuccess;
    return SPCCL_FAIL(spcclRevoked, "rank %d: the communicator is revoked: %s", rank,
                      fault->revokedReason().c_str());
  });
  comm->fault = std::move(fault);
  if (options.profileLinks && nranks > 1) SPCCL_CHECK(profileLinks(*comm));
  logCommReady(*comm, summarizeLinks(*comm, std::move(deviceNames)));
  return spcclSuccess;
}

spcclResult_t createComm(const UniqueIdContents& id, int nranks, int rank,
                         const CommOptions& options, spcclComm_t* out) {
  std::unique_ptr<spcclComm> comm = newComm(id, nranks, rank, options);
  if (!options.blocking) return startCommInit(std::move(comm), id, out);
  SPCCL_CHECK(setUpComm(comm.get(), id, nullptr));
  *out = comm.release();
  return spcclSuccess;
}

namespace {

// An abort from another thread: the calls still using comm (api/api_guard.h)
// fail at their next wake-up and leave. Waits for them within the
// communicator's deadline; past it, comm is left allocated (a call that
// never returns must not find it freed) and false is returned.
bool waitForCallsToLeave(spcclComm_t comm) {
  Deadline deadline(comm->options.timeoutMs);
  while (comm->callsInFlight.load(std::memory_order_acquire) > 0) {
    if (deadline.expired()) {
      SPCCL_WARN(
          "spcclCommAbort: %d call(s) on rank %d's communicator did not return within %d ms; "
          "its memory stays allocated",
          comm->callsInFlight.load(), comm->rank, comm->options.timeoutMs);
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

}  // namespace

void interruptCalls(spcclComm_t comm, const std::string& why) {
  if (comm != nullptr && comm->engine != nullptr) comm->engine->requestAbort(spcclRemoteError, why);
}

void destroyComm(spcclComm_t comm, bool abort) {
  if (comm == nullptr) return;
  comm->stagingProfile->printIfAsked(comm->rank, comm->nranks);
  // A creation still running is stopped either way: nothing of it needs
  // flushing, and its thread must not outlive comm.
  if (comm->init) cancelCommInit(*comm);
  {
    std::unique_lock<std::mutex> lock(comm->queueMutex);
    comm->stopping = true;
    if (abort) {
      for (auto& item : comm->queue) {
        const bool detached = item.second->detached;  // see the worker's loop
        {
          std::lock_guard<std::mutex> requestLock(item.second->state.mutex);
          item.second->state.done = true;
          item.second->state.result = spcclRemoteError;
          item.second->state.error = "communicator aborted";
          item.second->state.cv.notify_all();
        }
        if (detached) delete item.second;
      }
      // Dropping the jobs releases the streams that wait for them
      // (core/staged_call.cc).
      comm->queue.clear();
    }
  }
  comm->queueCv.notify_all();
  if (abort && comm->engine) {
    // A thread inside the engine (a call of another thread, or the worker)
    // aborts it at its next wake-up; with nobody inside, it happens here.
    static const std::string kWhy = "spcclCommAbort was called";
    interruptCalls(comm, kWhy);
    std::unique_lock<std::mutex> exec(comm->execMutex, std::try_to_lock);
    if (exec.owns_lock()) comm->engine->abort(spcclRemoteError, kWhy);
  }
  if (comm->worker.joinable()) comm->worker.join();
  if (abort && !waitForCallsToLeave(comm)) return;
  delete comm->finalizeRequest;  // never handed to the user: spcclCommGetAsyncError polls it
  {
    std::lock_guard<std::mutex> lock(comm->errorSink->mutex);
    comm->errorSink->comm = nullptr;
  }
  delete comm;
}

spcclResult_t finishCall(spcclComm_t comm, spcclResult_t result) {
  // A non-blocking child communicator (spcclCommSplit) on its way: not a
  // failure of comm's.
  if (result == spcclInProgress) return result;
  result = revokedResult(comm, result);
  if (result != spcclSuccess && comm != nullptr) comm->lastError = threadLastError();
  return result;
}

spcclResult_t rejectCall(spcclComm_t comm, spcclResult_t failure, uint64_t callsAhead) {
  if (comm != nullptr && comm->engine != nullptr && comm->nranks > 1) {
    // A copy: the thread's last error changes as later calls fail.
    // NOLINTNEXTLINE(performance-unnecessary-copy-initialization)
    const std::string why = threadLastError();
    runBlocking(comm, [&] {
      comm->engine->withdraw(failure, why, callsAhead);
      return spcclSuccess;
    });
    setThreadLastError(why);
  }
  return finishCall(comm, failure);
}

namespace {

spcclResult_t failIfFinalized(spcclComm_t comm) {
  if (!comm->finalized.load()) return spcclSuccess;
  return SPCCL_FAIL(spcclInvalidUsage,
                    "rank %d: the communicator was finalized (spcclCommFinalize); only "
                    "spcclCommDestroy and spcclCommAbort remain",
                    comm->rank);
}

}  // namespace

spcclResult_t runBlocking(spcclComm_t comm, const std::function<spcclResult_t()>& fn) {
  SPCCL_CHECK(failIfFinalized(comm));
  SPCCL_CHECK(failIfRevoked(comm));
  {
    std::unique_lock<std::mutex> lock(comm->queueMutex);
    comm->queueCv.wait(lock, [comm] { return comm->queue.empty() && !comm->workerRunning; });
  }
  std::lock_guard<std::mutex> exec(comm->execMutex);
  return fn();
}

spcclResult_t runAsync(spcclComm_t comm, std::function<spcclResult_t()> fn,
                       spcclRequest_t* request) {
  SPCCL_CHECK(failIfFinalized(comm));
  fn = [comm, call = std::move(fn)] {
    SPCCL_CHECK(failIfRevoked(comm));
    return revokedResult(comm, call());
  };
  auto* req = new spcclRequest();
  req->errorSink = comm->errorSink;
  req->detached = request == nullptr;
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
            try {
              result = item.first();
            } catch (const std::bad_alloc&) {
              result = SPCCL_FAIL(spcclSystemError, "a queued call ran out of memory");
            } catch (const std::exception& e) {
              result = SPCCL_FAIL(spcclInternalError, "a queued call failed: %s", e.what());
            }
            error = threadLastError();
          }
          // Read before the request completes: a waiter may free it as soon
          // as it sees done, so nothing here touches it after the lock.
          const bool detached = item.second->detached;
          {
            std::lock_guard<std::mutex> requestLock(item.second->state.mutex);
            item.second->state.done = true;
            item.second->state.result = result;
            item.second->state.error = error;
            item.second->state.cv.notify_all();
          }
          if (detached) delete item.second;
          lock.lock();
          comm->workerRunning = false;
          comm->queueCv.notify_all();
        }
      });
    }
  }
  comm->queueCv.notify_all();
  if (request != nullptr) *request = req;
  return spcclSuccess;
}

spcclResult_t runCollectiveBlocking(spcclComm_t comm, const CollSignature& signature,
                                    const std::function<spcclResult_t(CollContext&)>& body) {
  return finishCall(
      comm, runBlocking(comm, [&] { return runCollective(*comm->engine, signature, body); }));
}

spcclResult_t runCollectiveAsync(spcclComm_t comm, const CollSignature& signature,
                                 std::function<spcclResult_t(CollContext&)> body,
                                 spcclRequest_t* request) {
  return runAsync(
      comm,
      [comm, signature, body = std::move(body)] {
        return runCollective(*comm->engine, signature, body);
      },
      request);
}

}  // namespace spccl
