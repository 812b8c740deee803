// The shm transport's control stream (transports/shm/shm_protocol.h) on the
// receive side: the sender's Hello, then per message [u64 length][u8 mode]
// and, for a remote message, the sender's address. Remote reads are refused
// here (shmRefuseRemoteReadsForTesting), so each remote message is answered
// kNak (an empty one kAck) and its payload streamed, as when ptrace rules forbid
// process_vm_readv. The peer is the other end of a socketpair that sends
// the input's stream and shuts down its writing side.
// Input: [receives u8][capacity u16 per receive][stream bytes].
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "stream_receives.h"
#include "transports/shm/shm_comm.h"
#include "transports/shm/shm_protocol.h"
#include "transports/shm/shm_testing.h"

using namespace spccl;
using namespace spccl::transport;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::quietLogs();
  shmRefuseRemoteReadsForTesting(true);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in(data, size);
  const auto [capacities, stream] = fuzz::takeStreamCase(in);
  ShmComm comm(CommKind::Recv);
  int fds[2];
  fuzz::attachToSocketPair(&comm, fds);
  comm.peerPid = getpid();
  const auto [buffers, posted] = fuzz::postReceives<ShmRequest>(&comm, capacities);
  for (ShmRequest* request : posted) request->stage = ShmStage::ReadPrefix;  // as shmIrecv posts
  fuzz::sendWhole(fds[1], stream);
  ::shutdown(fds[1], SHUT_WR);
  const spcclResult_t res = fuzz::progressReceives(&comm);

  // The model.
  size_t at = 0, completed = 0;
  std::string answers;
  bool modelFails = stream.size() < sizeof(shm::Hello);
  if (!modelFails) {
    shm::Hello hello;
    std::memcpy(&hello, stream.data(), sizeof(hello));
    modelFails = hello.magic != shm::kHelloMagic;
    at = sizeof(hello);
  }
  for (size_t i = 0; i < capacities.size() && !modelFails; ++i) {
    if (stream.size() - at < shm::kPrefixBytes) {
      modelFails = true;
      break;
    }
    uint64_t length = 0;
    std::memcpy(&length, stream.data() + at, sizeof(length));
    const uint8_t mode = stream[at + sizeof(length)];
    at += shm::kPrefixBytes;
    if ((mode != 1 && mode != 2) || length > capacities[i]) {
      modelFails = true;
      break;
    }
    if (mode == 2) {
      if (stream.size() - at < sizeof(uint64_t)) {
        modelFails = true;
        break;
      }
      at += sizeof(uint64_t);
      // Nothing to copy is a successful copy (an honest sender never sends
      // an empty message remote: only those above SPCCL_SHM_INLINE_BYTES).
      answers += length == 0 ? shm::kAck : shm::kNak;
    }
    if (stream.size() - at < length) {
      modelFails = true;
      break;
    }
    SPCCL_FUZZ_CHECK(posted[i]->done && posted[i]->result == length);
    SPCCL_FUZZ_CHECK(length == 0 || std::memcmp(buffers[i].get(), stream.data() + at, length) == 0);
    at += length;
    ++completed;
  }
  SPCCL_FUZZ_CHECK(modelFails == (res != spcclSuccess));
  for (size_t i = completed; i < capacities.size(); ++i) SPCCL_FUZZ_CHECK(!posted[i]->done);
  // Each remote descriptor read was answered, in order.
  std::string got(answers.size() + 1, '\0');
  const ssize_t n = ::recv(fds[1], got.data(), got.size(), MSG_DONTWAIT);
  got.resize(n > 0 ? static_cast<size_t>(n) : 0);
  if (!modelFails) SPCCL_FUZZ_CHECK(got == answers);
  ::close(fds[0]);
  ::close(fds[1]);
  return 0;
}
