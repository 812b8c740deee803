// What the two built-in stream transports (tcp, shm) share: the comm tag
// that pollFd/describe dispatch on, the sticky failure of a comm, the fixed
// set of in-order request slots, and test() on top of those. The rules
// come from include/spccl_net.h.
#pragma once

#include <unistd.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "base/check.h"
#include "spccl_net.h"

namespace spccl::transport {

enum class CommKind : uint32_t { Listen, Send, Recv };

// First base of every comm handed out as void*, so that the ABI functions
// taking "any comm" can tell which one they got.
struct CommBase {
  explicit CommBase(CommKind k) : kind(k) {}
  CommKind kind;
  int fd = -1;
  std::string peerName;  // "host:port" or "pid N ..."; the local address for listen comms
};

// Once a comm fails (peer gone, oversize message, protocol error), the byte
// stream can no longer be trusted: every pending and later request fails
// with the first message.
class CommFailure {
 public:
  bool failed() const { return code_ != spcclSuccess; }
  spcclResult_t code() const { return code_; }
  // Records the failure just reported through SPCCL_FAIL and returns its code.
  spcclResult_t record(spcclResult_t code) {
    if (!failed()) {
      code_ = code;
      message_ = threadLastError();
    }
    return code_;
  }
  spcclResult_t report() const { return SPCCL_FAIL(code_, "%s", message_.c_str()); }

 private:
  spcclResult_t code_ = spcclSuccess;
  std::string message_;
};

// SPCCL_NET_MAX_REQUESTS slots. Requests leave the in-flight queue in the
// order they were posted (the ABI's in-order completion) but keep their slot
// until test() has reported them, which may happen in any order.
template <typename Request>
class InOrderRequests {
 public:
  static constexpr size_t kSlots = SPCCL_NET_MAX_REQUESTS;

  // A fresh request at the back of the queue, or nullptr when all slots are taken.
  Request* post() {
    for (size_t i = 0; i < kSlots; ++i) {
      if (used_[i]) continue;
      used_[i] = true;
      slots_[i] = Request{};
      order_[(first_ + count_) % kSlots] = static_cast<uint8_t>(i);
      ++count_;
      return &slots_[i];
    }
    return nullptr;
  }
  size_t inFlight() const { return count_; }
  // i-th unfinished request in posted order; 0 is the oldest.
  Request& inFlightAt(size_t i) { return slots_[order_[(first_ + i) % kSlots]]; }
  Request& oldest() { return inFlightAt(0); }
  void finishOldest() {
    first_ = (first_ + 1) % kSlots;
    --count_;
  }
  // After a failure nothing is in flight any more; slots stay taken until released.
  void abandonInFlight() { count_ = 0; }
  void release(Request* request) { used_[static_cast<size_t>(request - slots_.data())] = false; }

 private:
  std::array<Request, kSlots> slots_{};
  std::array<bool, kSlots> used_{};
  std::array<uint8_t, kSlots> order_{};
  size_t first_ = 0;
  size_t count_ = 0;
};

// Posts a request on comm (which has `requests`, `failure`, `peerName`) or
// fails when the ABI's limit of outstanding requests is reached.
template <typename Comm, typename Request>
spcclResult_t postRequest(Comm* comm, const char* op, Request** out) {
  if (comm->failure.failed()) return comm->failure.report();
  *out = comm->requests.post();
  if (*out == nullptr)
    return SPCCL_FAIL(spcclInvalidUsage, "%s to %s: more than %d requests outstanding", op,
                      comm->peerName.c_str(), SPCCL_NET_MAX_REQUESTS);
  (*out)->comm = comm;
  return spcclSuccess;
}

// test() for transports whose Comm has progress(), `failure` and `requests`,
// and whose Request has `comm`, `done` and `result`.
template <typename Comm, typename Request>
spcclResult_t testRequest(Request* request, int* done, size_t* size) {
  Comm* comm = request->comm;
  *done = 0;
  if (!request->done) {
    spcclResult_t res = comm->progress();
    if (res != spcclSuccess && !comm->failure.failed()) return res;
  }
  if (request->done) {
    *done = 1;
    if (size != nullptr) *size = request->result;
    comm->requests.release(request);
    return spcclSuccess;
  }
  if (comm->failure.failed()) {
    comm->requests.release(request);
    return comm->failure.report();
  }
  return spcclSuccess;
}

// regMr/deregMr of transports that need no registration (host memory only).
inline spcclResult_t regMrNotNeeded(void*, void*, size_t, int type, void** mhandle) {
  if (mhandle != nullptr) *mhandle = nullptr;
  if (type != SPCCL_PTR_HOST)
    return SPCCL_FAIL(spcclInvalidArgument,
                      "regMr: memory type %d is not supported (host memory only)", type);
  return spcclSuccess;
}
inline spcclResult_t deregMrNotNeeded(void*, void*) { return spcclSuccess; }

// describe() of a comm handed out as CommBase*: its peer's name (a listen
// comm's: its own address). `transport` names the caller in the error.
inline spcclResult_t describePeer(const char* transport, void* comm, char* buf, size_t len) {
  if (comm == nullptr || buf == nullptr || len == 0)
    return SPCCL_FAIL(spcclInvalidArgument, "%s describe: NULL argument", transport);
  std::snprintf(buf, len, "%s", static_cast<CommBase*>(comm)->peerName.c_str());
  return spcclSuccess;
}

// closeSend/closeRecv/closeListen: the comm was handed out as CommBase*.
template <typename Comm>
spcclResult_t closeComm(void* comm) {
  if (comm == nullptr) return spcclSuccess;
  Comm* owned = static_cast<Comm*>(static_cast<CommBase*>(comm));
  if (owned->fd >= 0) close(owned->fd);
  delete owned;
  return spcclSuccess;
}

}  // namespace spccl::transport
