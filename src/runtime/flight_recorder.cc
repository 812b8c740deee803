#include "runtime/flight_recorder.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <ctime>

#include "base/check.h"
#include "base/knobs.h"
#include "runtime/call_log.h"
#include "runtime/flight_signals.h"

namespace spccl {

namespace {

constexpr int64_t kMaxCapacity = 1 << 20;
// A record's JSON is under 640 bytes; a dump is written with one write(2)
// when it fits this, so that log lines of other threads do not cut it.
constexpr size_t kRecordJsonBytes = 768;
constexpr size_t kPeerJsonBytes = 160;

int64_t realtimeMicros() {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);  // async-signal-safe
  return static_cast<int64_t>(now.tv_sec) * 1000000 + now.tv_nsec / 1000;
}

const char* stateName(FlightState state) {
  switch (state) {
    case FlightState::Running:
      return "running";
    case FlightState::Done:
      return "done";
    case FlightState::Failed:
      return "failed";
  }
  return "?";
}

void copyText(char* out, size_t size, const char* text) {
  size_t n = std::min(std::strlen(text), size - 1);
  std::memcpy(out, text, n);
  out[n] = '\0';
}

}  // namespace

size_t flightRecorderCapacity() {
  return static_cast<size_t>(
      std::clamp<int64_t>(knobInt("SPCCL_FLIGHT_RECORDER"), 0, kMaxCapacity));
}

FlightRecorder::FlightRecorder(size_t capacity, uint64_t commId, int rank, int nranks)
    : ring_(std::max<size_t>(capacity, 1)),
      peers_(new PeerProgress[static_cast<size_t>(std::max(nranks, 1))]),
      commId_(commId),
      rank_(rank),
      nranks_(nranks) {
  gethostname(host_, sizeof(host_) - 1);
  host_[sizeof(host_) - 1] = '\0';
  registerFlightRecorder(this);
}

FlightRecorder::~FlightRecorder() { unregisterFlightRecorder(this); }

void FlightRecorder::begin(uint64_t seq, const CollSignature& signature,
                           const spcclCounters_t& counters) {
  const int64_t now = realtimeMicros();
  std::lock_guard<std::mutex> lock(mutex_);
  FlightRecord& record = ring_[recorded_ % ring_.size()];
  record.seq = seq;
  record.count = signature.count;
  record.startUs = now;
  record.endUs = 0;
  // Until the call ends: the counters at its start, so that a dump taken
  // meanwhile can still report what it moved so far (none).
  record.bytesSent = counters.bytesSent;
  record.bytesReceived = counters.bytesReceived;
  record.algorithm = nullptr;
  record.root = signature.root;
  record.type = signature.type;
  record.datatype = signature.datatype;
  record.op = signature.op;
  record.state = FlightState::Running;
  record.result = spcclSuccess;
  record.error[0] = '\0';
  ++recorded_;
}

FlightRecord* FlightRecorder::running(uint64_t seq) {
  // The newest records: a call's own internal calls may have begun after it.
  const uint64_t look = std::min<uint64_t>(recorded_, std::min<size_t>(ring_.size(), 4));
  for (uint64_t back = 1; back <= look; ++back) {
    FlightRecord& record = ring_[(recorded_ - back) % ring_.size()];
    if (record.seq == seq && record.endUs == 0) return &record;
  }
  return nullptr;
}

void FlightRecorder::noteAlgorithm(uint64_t seq, const char* algorithm) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (FlightRecord* record = running(seq)) record->algorithm = algorithm;
}

void FlightRecorder::end(uint64_t seq, spcclResult_t result, const spcclCounters_t& counters) {
  const int64_t now = realtimeMicros();
  std::lock_guard<std::mutex> lock(mutex_);
  FlightRecord* record = running(seq);
  if (record == nullptr) return;
  record->endUs = now;
  record->bytesSent = counters.bytesSent - record->bytesSent;
  record->bytesReceived = counters.bytesReceived - record->bytesReceived;
  if (result == spcclSuccess) {
    record->state = FlightState::Done;
    return;
  }
  record->state = FlightState::Failed;
  if (record->result == spcclSuccess) {
    record->result = result;
    copyText(record->error, sizeof(record->error), threadLastError().c_str());
  }
}

void FlightRecorder::failRunning(spcclResult_t code, const std::string& why) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (recorded_ == 0) return;
  FlightRecord& record = ring_[(recorded_ - 1) % ring_.size()];
  if (record.state != FlightState::Running || record.result != spcclSuccess) return;
  record.result = code;
  copyText(record.error, sizeof(record.error), why.c_str());
}

void FlightRecorder::noteSent(int peer, uint64_t seq, uint64_t bytes) {
  // One writer (the thread that holds the engine): plain relaxed stores.
  PeerProgress& progress = peers_[peer];
  progress.bytesSent.store(progress.bytesSent.load(std::memory_order_relaxed) + bytes,
                           std::memory_order_relaxed);
  if (seq != 0) progress.lastCallSent.store(seq, std::memory_order_relaxed);
}

void FlightRecorder::noteReceived(int peer, uint64_t seq, uint64_t bytes) {
  PeerProgress& progress = peers_[peer];
  progress.bytesReceived.store(progress.bytesReceived.load(std::memory_order_relaxed) + bytes,
                               std::memory_order_relaxed);
  if (seq != 0) progress.lastCallReceived.store(seq, std::memory_order_relaxed);
}

bool FlightRecorder::dump(int fd, const char* trigger, const char* detail) {
  std::lock_guard<std::mutex> lock(mutex_);
  const size_t records = std::min<uint64_t>(recorded_, ring_.size());
  std::vector<char> buffer(1024 + records * kRecordJsonBytes +
                           static_cast<size_t>(nranks_) * kPeerJsonBytes);
  FlightJsonWriter out(buffer.data(), buffer.size(), fd);
  write(out, trigger, detail);
  return out.flush();
}

void FlightRecorder::dumpFromSignal(int fd, const char* trigger, char* buffer,
                                    size_t capacity) const {
  FlightJsonWriter out(buffer, capacity, fd);
  write(out, trigger, nullptr);
  out.flush();
}

void FlightRecorder::write(FlightJsonWriter& out, const char* trigger, const char* detail) const {
  out.raw("{");
  out.key("spccl_flight_recorder", true);
  out.unsignedNumber(1);
  out.key("trigger");
  out.string(trigger);
  out.key("detail");
  out.string(detail);
  out.key("comm");
  out.hex64(commId_);
  out.key("rank");
  out.signedNumber(rank_);
  out.key("nranks");
  out.signedNumber(nranks_);
  out.key("host");
  out.string(host_);
  out.key("pid");
  out.signedNumber(getpid());
  out.key("dumped_at_us");
  out.signedNumber(realtimeMicros());
  out.key("capacity");
  out.unsignedNumber(ring_.size());
  out.key("calls_recorded");
  out.unsignedNumber(recorded_);
  out.key("peers");
  out.raw("[");
  bool first = true;
  for (int peer = 0; peer < nranks_; ++peer) {
    if (peer == rank_) continue;
    const PeerProgress& progress = peers_[peer];
    out.raw(first ? "{" : ",{");
    first = false;
    out.key("rank", true);
    out.signedNumber(peer);
    out.key("sent_bytes");
    out.unsignedNumber(progress.bytesSent.load(std::memory_order_relaxed));
    out.key("received_bytes");
    out.unsignedNumber(progress.bytesReceived.load(std::memory_order_relaxed));
    out.key("last_call_sent");
    out.unsignedNumber(progress.lastCallSent.load(std::memory_order_relaxed));
    out.key("last_call_received");
    out.unsignedNumber(progress.lastCallReceived.load(std::memory_order_relaxed));
    out.raw("}");
  }
  out.raw("]");
  out.key("records");
  out.raw("[");
  const uint64_t kept = std::min<uint64_t>(recorded_, ring_.size());
  for (uint64_t i = recorded_ - kept; i < recorded_; ++i) {
    if (i != recorded_ - kept) out.raw(",");
    writeRecord(out, ring_[i % ring_.size()]);
  }
  out.raw("]}\n");
}

void FlightRecorder::writeRecord(FlightJsonWriter& out, const FlightRecord& record) const {
  CollSignature signature;
  signature.type = record.type;
  signature.root = record.root;
  const auto datatype = static_cast<spcclDataType_t>(record.datatype);
  out.raw("{");
  out.key("call", true);
  out.unsignedNumber(record.seq);
  out.key("coll");
  out.string(collTypeName(record.type));
  out.key("datatype");
  out.string(spcclTypeName(datatype));
  out.key("count");
  out.unsignedNumber(record.count);
  out.key("bytes");
  out.unsignedNumber(record.count * spcclTypeSize(datatype));
  out.key("op");
  out.string(collReduces(record.type) ? spcclOpName(static_cast<spcclRedOp_t>(record.op))
                                      : nullptr);
  out.key("root");
  out.signedNumber(collRooted(signature) ? record.root : -1);
  out.key("algorithm");
  out.string(record.algorithm);
  out.key("state");
  out.string(stateName(record.state));
  out.key("start_us");
  out.signedNumber(record.startUs);
  out.key("end_us");
  out.signedNumber(record.endUs);
  if (record.endUs != 0) {
    out.key("sent_bytes");
    out.unsignedNumber(record.bytesSent);
    out.key("received_bytes");
    out.unsignedNumber(record.bytesReceived);
  }
  if (record.result != spcclSuccess) {
    out.key("result");
    out.string(spcclGetErrorString(record.result));
    out.key("error");
    out.string(record.error);
  }
  out.raw("}");
}

}  // namespace spccl
