// A TCP connection next to a plugin's real data path (UCX endpoints, IB
// queue pairs), for what that path cannot do by itself: exchanging the
// setup blobs (UCP worker addresses, QP numbers and GIDs) without blocking,
// and telling that the peer is gone (EOF) even when the data path would
// only notice after long retries or never (UCX's shared-memory transports).
// Once set up it stays silent; any byte or EOF afterwards means the peer
// closed or died. Used by the ucx and ib plugins; nothing here blocks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/socket.h"
#include "spccl.h"

namespace spccl::transport {

class SideChannel {
 public:
  SideChannel() = default;
  SideChannel(const SideChannel&) = delete;
  SideChannel& operator=(const SideChannel&) = delete;
  ~SideChannel();

  // Sender side: a non-blocking connect. Receiver side: an accepted socket.
  spcclResult_t connect(const net::SockAddr& addr, int64_t deadlineMs);
  void adopt(int fd, const net::SockAddr& peer, int64_t deadlineMs);

  // Bytes to send once connected, and how many to read in all (may grow).
  void queueSend(const void* data, size_t size);
  void expectTotal(size_t bytes);

  // Moves what it can. Done: connected, everything sent and everything
  // expected received. A failure (reported through SPCCL_FAIL) is returned once.
  enum class Status { InProgress, Done };
  spcclResult_t progress(Status* status);
  const std::vector<unsigned char>& received() const { return in_; }

  // After setup: true once the peer closed or died (checked at most every
  // kAliveCheckMs: it is a system call and transports test often).
  bool peerGone();

  // What to poll(2) while setting up.
  int fd() const { return fd_; }
  short pollEvents() const;
  const std::string& peerName() const { return peerName_; }
  void close();

  static constexpr int64_t kAliveCheckMs = 10;

 private:
  int fd_ = -1;
  std::string peerName_;
  bool connected_ = false;
  int64_t deadlineMs_ = 0;
  std::vector<unsigned char> out_;
  size_t sent_ = 0;
  std::vector<unsigned char> in_;
  size_t received_ = 0;
  bool gone_ = false;
  int64_t lastAliveCheckMs_ = 0;
};

}  // namespace spccl::transport
