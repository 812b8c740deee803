#include "common/collective_benchmark.h"

#include <algorithm>

#include "common/result_check.h"
#include "common/timed_loop.h"

namespace spccl::perf {

namespace {

const ElementCodec& codecFor(spcclDataType_t type) {
  // The options only ever hold valid types.
  return *elementCodecFor(type);
}

}  // namespace

CollectiveBenchmark::CollectiveBenchmark(const CollectiveSpec& spec, const PerfOptions& options,
                                         const PerfSession& session)
    : spec_(spec), options_(options), session_(session), root_(spec.rooted ? options.root : -1) {
  // In place, the send data lives inside the receive buffer, so that one
  // must hold either; size both for the larger, at the largest size.
  size_t bytes = 0;
  for (const spcclDataType_t type : options.types) {
    const BufferLayout layout = layoutFor(options.maxBytes, type);
    bytes = std::max(bytes, std::max(layout.sendCount, layout.recvCount) * spcclTypeSize(type));
  }
  // Zero-filled: pages are touched here, not in the first timed call.
  sendBuffer_.assign(bytes, 0);
  recvBuffer_.assign(bytes, 0);
  if (options.deviceBuffers) {
    device_ = session.device();
    deviceSend_ = device_->allocate(bytes);
    deviceRecv_ = device_->allocate(bytes);
  }
}

CollectiveBenchmark::~CollectiveBenchmark() {
  if (!device_) return;
  device_->release(deviceSend_);
  device_->release(deviceRecv_);
}

void CollectiveBenchmark::upload() {
  if (!device_) return;
  device_->upload(deviceSend_, sendBuffer_.data(), sendBuffer_.size());
  device_->upload(deviceRecv_, recvBuffer_.data(), recvBuffer_.size());
}

void CollectiveBenchmark::downloadResults() {
  if (device_) device_->download(recvBuffer_.data(), deviceRecv_, recvBuffer_.size());
}

BufferLayout CollectiveBenchmark::layoutFor(size_t bytes, spcclDataType_t type) const {
  return spec_.layout(bytes / spcclTypeSize(type), session_.nranks());
}

// The send and receive buffers of a call at the given bases: in place,
// both inside the receive buffer at NCCL's offsets.
CollectiveBenchmark::Buffers CollectiveBenchmark::hostBuffersFor(const BufferLayout& layout,
                                                                 spcclDataType_t type,
                                                                 bool inPlace) {
  if (!inPlace) return {sendBuffer_.data(), recvBuffer_.data()};
  const size_t elementBytes = spcclTypeSize(type);
  const size_t rank = static_cast<size_t>(session_.rank());
  unsigned char* base = recvBuffer_.data();
  return {base + layout.sendInPlaceOffset * rank * elementBytes,
          base + layout.recvInPlaceOffset * rank * elementBytes};
}

CollectiveBenchmark::Buffers CollectiveBenchmark::buffersFor(const BufferLayout& layout,
                                                             spcclDataType_t type, bool inPlace) {
  const Buffers host = hostBuffersFor(layout, type, inPlace);
  if (!device_) return host;
  // The same offsets in the device buffers.
  auto* send = static_cast<unsigned char*>(deviceSend_);
  auto* recv = static_cast<unsigned char*>(deviceRecv_);
  const auto offset = [](const void* p, const std::vector<unsigned char>& base) {
    return static_cast<size_t>(static_cast<const unsigned char*>(p) - base.data());
  };
  return {inPlace ? recv + offset(host.send, recvBuffer_) : send,
          recv + offset(host.recv, recvBuffer_)};
}

CollectiveCall CollectiveBenchmark::callFor(const Buffers& buffers, const BufferLayout& layout,
                                            spcclDataType_t type, spcclRedOp_t op) const {
  return {buffers.send, buffers.recv,  layout.paramCount, type,
          op,           options_.root, session_.comm(),   device_ ? device_->stream() : nullptr};
}

// With --device the call is enqueued on the stream: each one is waited
// for, so that its time is the call's (as a blocking host call's is).
void CollectiveBenchmark::run(const CollectiveCall& call) const {
  session_.require(spec_.run(call), spec_.name);
  if (device_) device_->synchronize();
}

void CollectiveBenchmark::warmUp(size_t bytes, spcclDataType_t type, spcclRedOp_t op) {
  const BufferLayout layout = layoutFor(bytes, type);
  const CollectiveCall call =
      callFor(buffersFor(layout, type, /*inPlace=*/false), layout, type, op);
  for (int i = 0; i < options_.warmupIterations; ++i) run(call);
}

SizeResult CollectiveBenchmark::measure(size_t bytes, spcclDataType_t type, spcclRedOp_t op) {
  const BufferLayout layout = layoutFor(bytes, type);
  SizeResult result{};
  result.bytes = std::max(layout.sendCount, layout.recvCount) * spcclTypeSize(type);
  result.count = layout.paramCount;
  result.type = type;
  result.opName = spec_.reduces ? spcclOpName(op) : "none";
  result.root = root_;
  result.outOfPlace = measureMode(layout, result.bytes, type, op, /*inPlace=*/false);
  result.inPlace = measureMode(layout, result.bytes, type, op, /*inPlace=*/true);
  return result;
}

ModeResult CollectiveBenchmark::measureMode(const BufferLayout& layout, size_t bytes,
                                            spcclDataType_t type, spcclRedOp_t op, bool inPlace) {
  const Buffers buffers = buffersFor(layout, type, inPlace);
  const Buffers host = hostBuffersFor(layout, type, inPlace);
  const CollectiveCall call = callFor(buffers, layout, type, op);
  const ElementCodec& codec = codecFor(type);
  const ReferenceData data(inputPatternFor(spec_.reduces, op), op, session_.nranks());
  const CheckContext context{session_.rank(), options_.root, layout, data};
  // Reference values for the timed calls too (nccl-tests does the same):
  // no NaN or denormal slows a reduction down.
  if (options_.check) {
    prepareCheckBuffers(codec, context, host.send, host.recv);
    upload();
  }
  run(call);  // untimed: connections and first-touch costs stay out of the times
  session_.barrier();

  ModeResult result;
  timeIterations(
      session_, options_.iterations, [&] { run(call); }, &result);
  const double seconds = result.averageSeconds;
  result.algBandwidth = seconds > 0.0 ? static_cast<double>(bytes) / seconds / 1.0e9 : 0.0;
  result.busBandwidth = result.algBandwidth * spec_.busBandwidthFactor(session_.nranks());
  if (options_.check) result.wrongElements = checkedWrongElements(call, host, codec, context);
  return result;
}

int64_t CollectiveBenchmark::checkedWrongElements(const CollectiveCall& call, const Buffers& host,
                                                  const ElementCodec& codec,
                                                  const CheckContext& context) {
  // Fresh inputs: the timed calls have overwritten them in place.
  prepareCheckBuffers(codec, context, host.send, host.recv);
  upload();
  run(call);
  downloadResults();
  const int64_t wrong = countWrongElements(spec_, codec, context, host.recv);
  return static_cast<int64_t>(session_.maxOverRanks(static_cast<double>(wrong)));
}

}  // namespace spccl::perf
