// A communicator's fault service: a listener and a thread per rank that
// answer the fault channel (core/fault_channel.h) whatever the engine is
// doing, and the state the revoke, the agreements and the shrinks share.
// Published in RankInfo::faultAddr at creation. docs/fault-tolerance.md.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/socket.h"
#include "core/fault_channel.h"
#include "spccl.h"

namespace spccl {

// One agreement's record on this rank (core/agreement.h has the protocol).
struct AgreementRecord {
  AgreeStage stage = AgreeStage::NotYet;
  int promised = -1;                  // the highest coordinator this rank answered
  int ballot = -1;                    // who accepted or decided `flag` and `failed`
  int flag = 0;                       // this rank's proposal, or the accepted or decided value
  std::vector<unsigned char> failed;  // one byte per rank
};

class FaultService {
 public:
  FaultService() = default;
  ~FaultService();
  FaultService(const FaultService&) = delete;
  FaultService& operator=(const FaultService&) = delete;

  // Before the rendezvous: listens on the bootstrap interface.
  spcclResult_t listen(net::SockAddr* advertised);
  // After it: every rank's address (by rank) is known; serves until destroyed.
  void start(const FaultChannelKeys& keys, std::vector<net::SockAddr> peers, int timeoutMs);

  const FaultChannelKeys& keys() const { return keys_; }
  int nranks() const { return static_cast<int>(peers_.size()); }
  int timeoutMs() const { return timeoutMs_; }
  std::string peerName(int rank) const;
  // A message to `rank`, one way (reply NULL) or answered.
  spcclResult_t send(int rank, FaultMessage message, const Deadline& deadline,
                     FaultMessage* reply) const;

  // ---- revoke (core/revoke.h) ----
  bool revoked() const { return revoked_.load(); }
  std::string revokedReason() const;
  // Records the revoke; true the first time.
  bool markRevoked(const std::string& why);
  // Readable once the communicator is revoked: the engine sleeps on it too
  // (Engine::setInterrupt), so a pending call ends when the relay comes.
  int revokedFd() const { return revokedFd_; }
  // Tells every other rank except `skip`, one way, in a background thread.
  void relayRevoke(int skip);
  // Waits, at most maxMs, until the service thread has read what already
  // waits at its listener: a rank stopped (SIGSTOP) while the others
  // revoked finds their revoke there and their abort frames on its
  // control connections, and a failed call must see the revoke before
  // it says which error it was (core/revoke.h).
  void catchUp(int64_t maxMs);

  // ---- agreements (core/agreement.h) ----
  std::mutex mutex;
  std::condition_variable changed;                 // a record was decided, a shrink id came
  std::map<uint64_t, AgreementRecord> agreements;  // by instance
  std::map<uint64_t, FaultMessage> shrinkIds;      // by instance (core/shrink.h)
  std::vector<unsigned char> knownFailed;          // agreed failed ranks so far
  std::vector<int> lastAgreedFailed;               // the last agreement's (spcclCommGetFailedRanks)
  uint64_t agreementCount = 0;
  uint64_t shrinkCount = 0;
  bool shrinkFailed = false;  // a spcclCommShrink of this communicator failed here

 private:
  // Every connection at once, from one poll loop (as the rendezvous root):
  // an idle or slow sender only holds a slot until its deadline.
  void serve();
  // A complete, authenticated message; fd takes a reply when one is due.
  void handle(int fd, FaultMessage message);
  // The answer to a Query or an Accept, under `mutex`.
  FaultMessage answer(const FaultMessage& request);

  FaultChannelKeys keys_;
  std::vector<net::SockAddr> peers_;
  int timeoutMs_ = 60000;
  int listenFd_ = -1;
  int wakeFds_[2] = {-1, -1};  // ends the service thread's wait at destruction
  int revokedFd_ = -1;         // an eventfd, written once when revoked
  std::atomic<bool> stopping_{false};
  std::thread thread_;
  std::thread relay_;
  std::atomic<bool> revoked_{false};
  // catchUp's requests, and the last one the service loop has served: an
  // iteration that began after the request, so it polled the listener then.
  std::mutex catchUpMutex_;
  std::condition_variable caughtUp_;
  uint64_t catchUpRequests_ = 0;
  uint64_t catchUpServed_ = 0;
  mutable std::mutex revokeMutex_;
  std::string revokedReason_;
};

}  // namespace spccl
