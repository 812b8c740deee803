#include "mutating_net.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "core/transport_testing.h"
#include "runtime/frame.h"

namespace spccl::livefuzz {

namespace {

// One request handed to the engine: the real requests behind it (none for
// a dropped message, two for a duplicate) and the bytes they send.
struct WrappedRequest {
  std::vector<void*> real;
  std::vector<std::vector<unsigned char>> owned;
  size_t size = 0;  // reported when done: the size the engine asked for (send) or got (recv)
  bool isSend = false;
  void* comm = nullptr;  // a receive's comm (recvsInFlight)
};

struct State {
  std::mutex mutex;
  Mutation mutation;
  bool armed = false;
  bool applied = false;
  uint64_t headers = 0;
  uint64_t payloads = 0;
  size_t truncateNextPayloadBy = 0;
  std::string description;
  std::set<WrappedRequest*> sendsInFlight;
  // Receives not yet done, by comm: the engine may post some ahead and
  // close the comm without them (spcclCommDestroy), and only closeRecv
  // then frees their boxes.
  std::map<void*, std::set<WrappedRequest*>> recvsInFlight;
};

State& state() {
  static State s;
  return s;
}

bool isDataHeader(const void* data, size_t size) {
  if (size != sizeof(FrameHeader)) return false;
  FrameHeader h;
  std::memcpy(&h, data, sizeof(h));
  return h.magic == kFrameMagic && h.kind == static_cast<uint16_t>(FrameKind::Data);
}

bool isOtherFrame(const void* data, size_t size) {
  if (size < sizeof(FrameHeader)) return false;
  FrameHeader h;
  std::memcpy(&h, data, sizeof(h));
  return h.magic == kFrameMagic && h.kind != static_cast<uint16_t>(FrameKind::Data);
}

// Tests a wrapped request's real ones; done when all are.
spcclResult_t testWrapped(const spcclNet_v2_t* net, WrappedRequest* w, bool* done, size_t* size) {
  for (void*& r : w->real) {
    if (r == nullptr) continue;
    int finished = 0;
    size_t bytes = 0;
    spcclResult_t res = net->test(r, &finished, &bytes);
    if (res != spcclSuccess) {
      r = nullptr;
      return res;
    }
    if (!finished) {
      *done = false;
      return spcclSuccess;
    }
    if (!w->isSend) w->size = bytes;
    r = nullptr;
  }
  *done = true;
  *size = w->size;
  return spcclSuccess;
}

// Lets the sends already queued on the sockets leave (at most 2 s), so that
// raw bytes land between whole messages of the transport's stream.
void drainSends(const spcclNet_v2_t* net) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  for (WrappedRequest* w : state().sendsInFlight) {
    bool done = false;
    size_t size = 0;
    while (testWrapped(net, w, &done, &size) == spcclSuccess && !done &&
           std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

void writeRaw(int fd, const std::vector<unsigned char>& bytes) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  size_t sent = 0;
  while (sent < bytes.size() && std::chrono::steady_clock::now() < deadline) {
    ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<size_t>(n);
      continue;
    }
    pollfd p{fd, POLLOUT, 0};
    ::poll(&p, 1, 10);
  }
}

template <int Slot>
struct Forwarder {
  static inline const spcclNet_v2_t* real = nullptr;
  static inline spcclNet_v2_t table{};

  static spcclResult_t wrapRecv(void* comm, void* data, size_t capacity, void* mh, void** request) {
    auto* w = new WrappedRequest;
    w->real.push_back(nullptr);
    w->comm = comm;
    spcclResult_t res = real->irecv(comm, data, capacity, mh, &w->real[0]);
    if (res != spcclSuccess) {
      delete w;
      return res;
    }
    {
      std::lock_guard<std::mutex> lock(state().mutex);
      state().recvsInFlight[comm].insert(w);
    }
    *request = w;
    return spcclSuccess;
  }

  // The real comm closes its own requests; the boxes of this comm's
  // receives still in flight go with it.
  static spcclResult_t closeRecv(void* comm) {
    {
      std::lock_guard<std::mutex> lock(state().mutex);
      auto it = state().recvsInFlight.find(comm);
      if (it != state().recvsInFlight.end()) {
        for (WrappedRequest* w : it->second) delete w;
        state().recvsInFlight.erase(it);
      }
    }
    return real->closeRecv(comm);
  }

  static spcclResult_t send(void* comm, const void* data, size_t size, void* mh, void** request) {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    auto* w = new WrappedRequest;
    w->isSend = true;
    w->size = size;
    Rewrite rewrite;
    bool hit = false;
    if (s.armed && !isOtherFrame(data, size)) {
      const bool header = isDataHeader(data, size);
      uint64_t& counter = header ? s.headers : s.payloads;
      const uint64_t anyIndex = s.headers + s.payloads;
      const Target target = mutationTarget(s.mutation.kind);
      hit = !s.applied && s.mutation.kind != MutationKind::None &&
            ((target == Target::Any && anyIndex == s.mutation.index) ||
             (target == Target::Header && header && counter == s.mutation.index) ||
             (target == Target::Payload && !header && counter == s.mutation.index));
      if (!header && s.truncateNextPayloadBy > 0) {
        w->owned.emplace_back(static_cast<const unsigned char*>(data),
                              static_cast<const unsigned char*>(data) +
                                  (size - std::min(size, s.truncateNextPayloadBy)));
        s.truncateNextPayloadBy = 0;
      }
      if (hit) {
        rewrite = rewriteMessage(s.mutation, static_cast<const unsigned char*>(data), size, header);
        s.applied = true;
        s.description = rewrite.description;
        s.truncateNextPayloadBy = rewrite.truncateNextPayloadBy;
        std::printf("livefuzz: mutation: %s\n", rewrite.description.c_str());
        std::fflush(stdout);
      }
      ++counter;
    }
    if (hit && rewrite.exitAfter) {
      // A premature end: whatever raw bytes the mutation has (tcp only: on
      // shm they would not be a stream), then the process is gone.
      if (!rewrite.raw.empty() && std::strcmp(real->name, "tcp") == 0) {
        drainSends(real);
        int fd = -1;
        short events = 0;
        if (real->pollFd(comm, &fd, &events) == spcclSuccess && fd >= 0) writeRaw(fd, rewrite.raw);
      }
      ::_exit(0);
    }
    if (hit) {
      w->owned = std::move(rewrite.sends);
    } else if (w->owned.empty()) {
      w->owned.emplace_back(static_cast<const unsigned char*>(data),
                            static_cast<const unsigned char*>(data) + size);
    }
    for (const std::vector<unsigned char>& bytes : w->owned) {
      void* r = nullptr;
      spcclResult_t res = real->isend(comm, bytes.data(), bytes.size(), mh, &r);
      if (res != spcclSuccess) {
        delete w;
        return res;
      }
      w->real.push_back(r);
    }
    s.sendsInFlight.insert(w);
    *request = w;
    return spcclSuccess;
  }

  static spcclResult_t test(void* request, int* done, size_t* size) {
    auto* w = static_cast<WrappedRequest*>(request);
    bool finished = false;
    size_t bytes = 0;
    spcclResult_t res = testWrapped(real, w, &finished, &bytes);
    if (res != spcclSuccess || finished) {
      std::lock_guard<std::mutex> lock(state().mutex);
      if (w->isSend)
        state().sendsInFlight.erase(w);
      else if (auto it = state().recvsInFlight.find(w->comm); it != state().recvsInFlight.end())
        it->second.erase(w);
      delete w;
    }
    if (res != spcclSuccess) return res;
    *done = finished ? 1 : 0;
    if (finished && size != nullptr) *size = bytes;
    return spcclSuccess;
  }

  static const spcclNet_v2_t* wrap(const spcclNet_v2_t* started) {
    real = started;
    table = *started;
    table.isend = send;
    table.irecv = wrapRecv;
    table.closeRecv = closeRecv;
    table.test = test;
    return &table;
  }
};

const spcclNet_v2_t* wrapTable(const spcclNet_v2_t* started) {
  // One forwarder per transport a process may start (auto: tcp and shm).
  if (Forwarder<0>::real == nullptr || Forwarder<0>::real == started)
    return Forwarder<0>::wrap(started);
  if (Forwarder<1>::real == nullptr || Forwarder<1>::real == started)
    return Forwarder<1>::wrap(started);
  return Forwarder<2>::wrap(started);
}

}  // namespace

void installMutatingTransport(const Mutation& mutation) {
  state().mutation = mutation;
  wrapTransportsForTesting(wrapTable);
}

void armMutation() {
  std::lock_guard<std::mutex> lock(state().mutex);
  state().armed = true;
}

MutationReport mutationReport() {
  std::lock_guard<std::mutex> lock(state().mutex);
  return {state().headers, state().payloads, state().applied, state().description};
}

}  // namespace spccl::livefuzz
