// Bootstrap: the unique id, the rendezvous root that collects every rank's
// connection details and hands the full table back. Every rendezvous
// connection runs a mutual HMAC challenge-response keyed by the job secret
// (core/handshake.h, docs/security.md); the secret itself is never sent.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "base/socket.h"
#include "core/handshake.h"
#include "core/job_settings.h"
#include "device/peer_access.h"
#include "spccl.h"
#include "spccl_net.h"

namespace spccl {

constexpr uint32_t kUniqueIdMagic = 0x44495053u;  // "SPID"
constexpr uint32_t kUniqueIdVersion = 2;

// The decoded contents of an spcclUniqueId.
struct UniqueIdContents {
  uint32_t magic = kUniqueIdMagic;
  uint32_t version = kUniqueIdVersion;
  net::SockAddr root{};
  // The id carries the secret: like NCCL's, it must travel between ranks
  // privately (the application's own channel), never in the clear.
  JobSecret secret;
  uint64_t commId = 0;
};
static_assert(sizeof(UniqueIdContents) <= SPCCL_UNIQUE_ID_BYTES);

spcclUniqueId encodeUniqueId(const UniqueIdContents& contents);
spcclResult_t decodeUniqueId(const spcclUniqueId& id, UniqueIdContents* out);
uint64_t randomU64();

// What every rank tells every other rank through the root.
struct RankInfo {
  int32_t rank = -1;
  int32_t nranks = 0;
  int32_t pid = 0;
  uint32_t reserved = 0;
  uint64_t hostId = 0;
  char hostname[64] = {};
  JobSettings job;  // what every rank must share (core/job_settings.h)
  // The network transport's (tcp or a plugin) listeners, one per device
  // (rail) in the transport's order, and the connections per rail this
  // rank asks for (SPCCL_NET_CONNS_PER_RAIL). Two ranks use the smaller
  // count of each (core/comm.cc).
  int32_t netDevices = 0;
  int32_t connsPerRail = 1;
  unsigned char netHandles[SPCCL_NET_MAX_DEVICES][SPCCL_NET_HANDLE_MAXSIZE] = {};
  unsigned char shmHandle[SPCCL_NET_HANDLE_MAXSIZE] = {};
  // Not spcclSuccess when this rank could not open its transport (then
  // setupError says why): every rank fails creation with that reason.
  int32_t setupResult = spcclSuccess;
  char setupError[300] = {};
  // This rank's challenge for the data connections it accepts, fresh per
  // communicator: a connecting peer's hello carries an HMAC over it
  // (core/comm.cc), so a hello recorded elsewhere never verifies here.
  unsigned char laneNonce[kNonceBytes] = {};
  // Where this rank's fault service listens (core/fault_service.h): the
  // revokes, agreements and shrinks that must work without the engine.
  net::SockAddr faultAddr{};
  // 1 when, at creation, this process had a current CUDA device (whose
  // PCI location the driver told), the CUDA driver and the device-resident
  // all-reduce's kernels (coll/device_all_reduce.h): a communicator joins
  // that schedule only when every rank can and every two ranks' devices
  // reach each other (core/device_collective_call.h).
  int32_t deviceAllReduceReady = 0;
  int32_t reserved2 = 0;
  // That device and the devices it can access as a peer (set with
  // deviceAllReduceReady).
  device::DevicePeerAccess devicePeers;
};
// The rendezvous refuses a hello whose RankInfo has another size
// (helloAcceptable): a change of this layout must change its size, or
// kHandshakeVersion (core/handshake.h).

// The rendezvous handshake (docs/security.md):
//   rank -> root  ClientHello     magic, version, rank, nranks, commId, nonceC
//   root -> rank  RootChallenge   nonceS, MAC_root(nonceC, nonceS, hello)
//   rank -> root  ClientProof     MAC_client(nonceC, nonceS, hello | info), info
//   root -> rank  RootReply, the table (on success), MAC_reply(nonceC, nonceS, reply | table)
// Each MAC binds its role, the communicator id and both ranks (the root is
// rank -1), so a replayed or reflected message never verifies.
struct ClientHello {
  uint32_t magic;
  uint32_t version;
  int32_t rank;
  int32_t nranks;
  uint32_t infoBytes;
  uint32_t reserved;
  uint64_t commId;
  Nonce nonce;
};

struct RootChallenge {
  uint32_t magic;
  uint32_t version;
  Nonce nonce;
  Mac mac;
};

struct ClientProof {
  Mac mac;
  RankInfo info;
};

// What a joined rank may send the root before its reply arrives: why it
// leaves. A rank whose own deadline passed gives up its place (the others
// time out as they would); any other departure (stopped, or the
// connection closed or reset: its process died) fails the rendezvous for
// every rank at once with spcclRemoteError naming it.
constexpr unsigned char kRendezvousGoodbyeTimedOut = 1;
constexpr unsigned char kRendezvousGoodbyeStopped = 2;

struct RootReply {
  uint32_t status;  // spcclResult_t
  uint32_t nranks;
  char message[256];
};

// The root's check of a hello, before it spends a nonce and a MAC on it
// (the first bytes from an unauthenticated peer; tests/fuzz/fuzz_handshake.cc).
bool helloAcceptable(const ClientHello& hello, uint64_t commId);

// Ends each text field of a RankInfo received in the table (hostname,
// setupError, the settings' transport and algorithm) with a NUL, whatever
// the rank sent: they are printed with %s and copied into strings.
void terminateRankInfoText(RankInfo* info);

// Starts the rendezvous root in a background thread on an already
// listening socket; it serves one rendezvous (the size comes from the first
// rank that authenticates) and exits. It serves every connection at once
// (poll), gives each SPCCL_HANDSHAKE_TIMEOUT_MS to authenticate, holds at
// most SPCCL_MAX_UNAUTH_PER_SOURCE unauthenticated ones per source address,
// and logs refusals once per source, with a summary at the end.
void startRendezvousRoot(int listenFd, const JobSecret& secret, uint64_t commId, int64_t timeoutMs);

// Waits, at most maxMs, until the rendezvous root of communicator `commId` that this
// process runs (if it runs one) has sent every rank its reply. A rank that
// fails right after the rendezvous calls it before returning: its process
// may exit next, and the root thread with it, before the last ranks got
// their table (they would see "root closed the connection" instead of the
// reason).
void waitForRendezvousRoot(uint64_t commId, int64_t maxMs);

// Sends this rank's info to the root and receives everyone's, indexed by rank.
// cancel (may be NULL): once set, the exchange fails within a few tens of ms
// (a non-blocking creation being aborted, core/comm_init.h).
spcclResult_t exchangeRankInfo(const UniqueIdContents& id, const RankInfo& mine, int64_t timeoutMs,
                               std::vector<RankInfo>* all,
                               const std::atomic<bool>* cancel = nullptr);

// Same host <=> same host id: hostname, boot id and network namespace
// (emulated hosts in namespaces must not use shm), or SPCCL_HOSTID.
uint64_t localHostId();

}  // namespace spccl
