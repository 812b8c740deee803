// The plugins' setup messages (transports/common/side_channel.h and the
// ucx plugin's answer, transports/ucx/ucx_address.h): a ucx sender reads
// [AddressHeader][worker address] from the receiver over the side channel,
// growing what it expects once the header says how long the address is.
// The peer here is the other end of a socketpair that sends the input (in
// pieces, then closes).
// Input: [piece u8][bytes the peer sends].
#include <sys/socket.h>
#include <unistd.h>

#include <vector>

#include "base/clock.h"
#include "base/socket.h"
#include "fuzz_support.h"
#include "transports/common/side_channel.h"
#include "transports/ucx/ucx_address.h"

using namespace spccl;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::quietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in(data, size);
  const size_t piece = 1 + in.take<uint8_t>();
  const std::vector<unsigned char> sent = in.bytes(1 << 16);
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) std::abort();
  transport::SideChannel side;
  net::SockAddr peer{};
  side.adopt(fds[0], peer, monotonicMs() + 2000);
  side.expectTotal(sizeof(ucx::AddressHeader));

  size_t written = 0;
  bool peerOpen = true;
  size_t total = 0;
  for (int round = 0; round < 1 << 12; ++round) {
    // The peer sends a piece per round, then closes.
    if (written < sent.size()) {
      const size_t n = std::min(piece, sent.size() - written);
      SPCCL_FUZZ_CHECK(::send(fds[1], sent.data() + written, n, MSG_NOSIGNAL) ==
                       static_cast<ssize_t>(n));
      written += n;
    } else if (peerOpen) {
      ::close(fds[1]);
      peerOpen = false;
    }
    transport::SideChannel::Status status;
    if (side.progress(&status) != spcclSuccess) {
      // Only a peer that closed before the whole answer fails.
      SPCCL_FUZZ_CHECK(!peerOpen || written == sent.size());
      break;
    }
    if (status != transport::SideChannel::Status::Done) continue;
    const std::vector<unsigned char>& received = side.received();
    SPCCL_FUZZ_CHECK(received.size() >= sizeof(ucx::AddressHeader));
    SPCCL_FUZZ_CHECK(std::memcmp(received.data(), sent.data(), received.size()) == 0);
    ucx::AddressHeader header;
    total = ucx::addressAnswerBytes(received.data(), &header);
    if (total == 0) break;  // refused: not a spccl ucx address
    SPCCL_FUZZ_CHECK(total == sizeof(header) + header.addressLength);
    SPCCL_FUZZ_CHECK(header.addressLength <= ucx::kMaxAddressBytes);
    if (received.size() < total) {
      side.expectTotal(total);
      continue;
    }
    // What createEndpoint gets: exactly the address, inside what arrived.
    SPCCL_FUZZ_CHECK(received.size() == total && total <= sent.size());
    break;
  }
  if (peerOpen) ::close(fds[1]);
  side.close();
  return 0;
}
