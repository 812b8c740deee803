// The tcp transport's stream framing (transports/tcp/tcp_comm.h): a
// receive comm reads [u64 le length][payload] messages into the receives
// posted on it, in order, and fails a message longer than its receive's
// capacity (include/spccl_net.h: oversize receives fail). The peer is the
// other end of a socketpair that sends the input's stream and closes.
// Input: [receives u8][capacity u16 per receive][stream bytes].
#include <endian.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <vector>

#include "fuzz_support.h"
#include "stream_receives.h"
#include "transports/tcp/tcp_comm.h"

using namespace spccl;
using namespace spccl::transport;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::quietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in(data, size);
  const auto [capacities, stream] = fuzz::takeStreamCase(in);
  TcpComm comm(CommKind::Recv);
  int fds[2];
  fuzz::attachToSocketPair(&comm, fds);
  const auto [buffers, posted] = fuzz::postReceives<TcpRequest>(&comm, capacities);
  fuzz::sendWhole(fds[1], stream);
  ::close(fds[1]);
  const spcclResult_t res = fuzz::progressReceives(&comm);

  // The model: messages in order, each into the next receive, the first
  // oversize or truncated one failing the comm.
  size_t at = 0, completed = 0;
  bool modelFails = false;
  for (size_t i = 0; i < capacities.size(); ++i) {
    if (stream.size() - at < 8) {
      modelFails = true;  // EOF before the length (or inside it)
      break;
    }
    uint64_t length = 0;
    std::memcpy(&length, stream.data() + at, 8);
    length = le64toh(length);
    if (length > capacities[i] || stream.size() - at - 8 < length) {
      modelFails = true;
      break;
    }
    SPCCL_FUZZ_CHECK(posted[i]->done && posted[i]->result == length);
    SPCCL_FUZZ_CHECK(length == 0 ||
                     std::memcmp(buffers[i].get(), stream.data() + at + 8, length) == 0);
    at += 8 + length;
    ++completed;
  }
  SPCCL_FUZZ_CHECK(modelFails == (res != spcclSuccess));
  for (size_t i = completed; i < capacities.size(); ++i) SPCCL_FUZZ_CHECK(!posted[i]->done);
  ::close(fds[0]);
  return 0;
}
