// What the harnesses of the stream transports' receive side
// (fuzz_tcp_stream, fuzz_shm_stream) share: the input's layout
// [receives u8][capacity u16 per receive][stream bytes], a socketpair whose
// other end sends the stream, the receives posted on the comm, and the
// progress that runs them.
#pragma once

#include <sys/socket.h>

#include <cstdlib>
#include <memory>
#include <vector>

#include "fuzz_support.h"
#include "transports/common/stream_comm.h"

namespace spccl::fuzz {

struct StreamCase {
  std::vector<size_t> capacities;     // one per receive, in posting order
  std::vector<unsigned char> stream;  // what the peer sends
};

inline StreamCase takeStreamCase(Input& in) {
  StreamCase c;
  c.capacities.resize(1 + in.take<uint8_t>() % SPCCL_NET_MAX_REQUESTS);
  for (size_t& capacity : c.capacities) capacity = in.take<uint16_t>() % 4096;
  c.stream = in.bytes(1 << 16);
  return c;
}

// comm on fds[0] of a new socketpair; fds[1] is the peer's end.
template <typename Comm>
void attachToSocketPair(Comm* comm, int fds[2]) {
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) std::abort();
  comm->fd = fds[0];
  comm->peerName = "fuzz peer";
}

inline void sendWhole(int fd, const std::vector<unsigned char>& stream) {
  SPCCL_FUZZ_CHECK(::send(fd, stream.data(), stream.size(), MSG_NOSIGNAL) ==
                   static_cast<ssize_t>(stream.size()));
}

template <typename Request>
struct PostedReceives {
  std::vector<std::unique_ptr<unsigned char[]>> buffers;
  std::vector<Request*> requests;
};

// Each receive's buffer is exactly its capacity: ASan sees any write past it.
template <typename Request, typename Comm>
PostedReceives<Request> postReceives(Comm* comm, const std::vector<size_t>& capacities) {
  PostedReceives<Request> posted;
  posted.buffers.resize(capacities.size());
  posted.requests.resize(capacities.size());
  for (size_t i = 0; i < capacities.size(); ++i) {
    posted.buffers[i] = std::make_unique<unsigned char[]>(capacities[i] + (capacities[i] == 0));
    SPCCL_FUZZ_CHECK(transport::postRequest(comm, "fuzz irecv", &posted.requests[i]) ==
                     spcclSuccess);
    posted.requests[i]->data = reinterpret_cast<char*>(posted.buffers[i].get());
    posted.requests[i]->capacity = capacities[i];
  }
  return posted;
}

// Until every receive is done or the comm fails; a bounded number of
// rounds, the whole stream being there already.
template <typename Comm>
spcclResult_t progressReceives(Comm* comm) {
  spcclResult_t res = spcclSuccess;
  for (int round = 0; round < 64 && res == spcclSuccess && comm->requests.inFlight() > 0; ++round)
    res = comm->progress();
  return res;
}

}  // namespace spccl::fuzz
