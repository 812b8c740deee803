// The flight recorder: each communicator's last N collective calls
// (SPCCL_FLIGHT_RECORDER=N, 0: off) in a ring of fixed-size records, with
// what each rank knows of its peers' progress, dumped as one line of JSON
// when the communicator times out, on spcclCommAbort, on a fatal signal
// (runtime/flight_signals.h) and on demand (spcclCommDump). Given every
// rank's dump, `spccl_info --dump` names the rank that never reached the
// call the others wait in (docs/observability.md, "Flight recorder").
//
// Cost per call: two uncontended lock/unlock pairs, two clock reads and a
// record's copy; per message, two relaxed stores. Nothing allocates after
// creation.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/flight_json.h"
#include "runtime/frame.h"
#include "spccl.h"

namespace spccl {

enum class FlightState : uint8_t { Running, Done, Failed };

struct FlightRecord {
  uint64_t seq = 0;  // the engine's call number, the one errors name
  uint64_t count = 0;
  int64_t startUs = 0;     // CLOCK_REALTIME, microseconds: comparable across hosts
  int64_t endUs = 0;       // 0 while running
  uint64_t bytesSent = 0;  // by this rank during the call
  uint64_t bytesReceived = 0;
  const char* algorithm = nullptr;  // a table's name (static storage), once noted
  int32_t root = -1;
  CollType type = CollType::None;
  uint8_t datatype = 0;
  uint8_t op = 0;
  FlightState state = FlightState::Running;
  spcclResult_t result = spcclSuccess;
  char error[256] = "";
};

// SPCCL_FLIGHT_RECORDER, clamped to [0, 1 << 20].
size_t flightRecorderCapacity();

class FlightRecorder {
 public:
  FlightRecorder(size_t capacity, uint64_t commId, int rank, int nranks);
  ~FlightRecorder();
  FlightRecorder(const FlightRecorder&) = delete;
  FlightRecorder& operator=(const FlightRecorder&) = delete;

  // A call begins / ends (runCollective). counters: the communicator's,
  // for the bytes the call moved.
  void begin(uint64_t seq, const CollSignature& signature, const spcclCounters_t& counters);
  void end(uint64_t seq, spcclResult_t result, const spcclCounters_t& counters);
  // The algorithm call `seq` runs (CollContext::noteChoice): a table's
  // name, static storage.
  void noteAlgorithm(uint64_t seq, const char* algorithm);
  // The engine broke while a call runs: that call failed with `why`.
  void failRunning(spcclResult_t code, const std::string& why);

  // A message to / from peer of call `seq` completed (Engine progress);
  // seq 0: a point-to-point message, counted in the bytes only.
  void noteSent(int peer, uint64_t seq, uint64_t bytes);
  void noteReceived(int peer, uint64_t seq, uint64_t bytes);

  // Writes the dump, one line of JSON, to fd. trigger: "timeout",
  // "spcclCommAbort", "spcclCommDump", "signal SIGSEGV"; detail: why, or
  // nullptr. False when writing failed.
  bool dump(int fd, const char* trigger, const char* detail);
  // The same without the lock and into `buffer`: for a signal handler,
  // which may have interrupted this recorder's own thread.
  void dumpFromSignal(int fd, const char* trigger, char* buffer, size_t capacity) const;

 private:
  struct PeerProgress {
    std::atomic<uint64_t> bytesSent{0};
    std::atomic<uint64_t> bytesReceived{0};
    std::atomic<uint64_t> lastCallSent{0};
    std::atomic<uint64_t> lastCallReceived{0};
  };
  void write(FlightJsonWriter& out, const char* trigger, const char* detail) const;
  void writeRecord(FlightJsonWriter& out, const FlightRecord& record) const;
  FlightRecord* running(uint64_t seq);

  mutable std::mutex mutex_;
  std::vector<FlightRecord> ring_;
  uint64_t recorded_ = 0;  // records begun so far; the newest is ring_[(recorded_ - 1) % size]
  std::unique_ptr<PeerProgress[]> peers_;
  uint64_t commId_;
  int rank_;
  int nranks_;
  char host_[64] = "?";
};

}  // namespace spccl
