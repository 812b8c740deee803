#include "common/collective_benchmark.h"

#include <time.h>

#include <algorithm>
#include <chrono>

#include "common/result_check.h"

namespace spccl::perf {

namespace {

double processCpuSeconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1.0e-9;
}

double medianOf(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const size_t middle = values.size() / 2;
  return values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2.0;
}

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
}

BufferLayout CollectiveBenchmark::layoutFor(size_t bytes, spcclDataType_t type) const {
  return spec_.layout(bytes / spcclTypeSize(type), session_.nranks());
}

CollectiveBenchmark::Buffers CollectiveBenchmark::buffersFor(const BufferLayout& layout,
                                                             spcclDataType_t type, bool inPlace) {
  if (!inPlace) return {sendBuffer_.data(), recvBuffer_.data()};
  const size_t elementBytes = spcclTypeSize(type);
  const size_t rank = static_cast<size_t>(session_.rank());
  unsigned char* base = recvBuffer_.data();
  return {base + layout.sendInPlaceOffset * rank * elementBytes,
          base + layout.recvInPlaceOffset * rank * elementBytes};
}

CollectiveCall CollectiveBenchmark::callFor(const Buffers& buffers, const BufferLayout& layout,
                                            spcclDataType_t type, spcclRedOp_t op) const {
  return {buffers.send, buffers.recv, layout.paramCount, type, op, options_.root, session_.comm()};
}

void CollectiveBenchmark::run(const CollectiveCall& call) const {
  session_.require(spec_.run(call), spec_.name);
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
  const CollectiveCall call = callFor(buffers, layout, type, op);
  const ElementCodec& codec = codecFor(type);
  const ReferenceData data(inputPatternFor(spec_.reduces, op), op, session_.nranks());
  const CheckContext context{session_.rank(), options_.root, layout, data};
  // Reference values for the timed calls too (nccl-tests does the same):
  // no NaN or denormal slows a reduction down.
  if (options_.check) prepareCheckBuffers(codec, context, buffers.send, buffers.recv);
  run(call);  // untimed: connections and first-touch costs stay out of the times
  session_.barrier();

  ModeResult result;
  timeIterations(call, &result);
  const double seconds = result.averageSeconds;
  result.algBandwidth = seconds > 0.0 ? static_cast<double>(bytes) / seconds / 1.0e9 : 0.0;
  result.busBandwidth = result.algBandwidth * spec_.busBandwidthFactor(session_.nranks());
  if (options_.check) result.wrongElements = checkedWrongElements(call, buffers, codec, context);
  return result;
}

void CollectiveBenchmark::timeIterations(const CollectiveCall& call, ModeResult* result) const {
  using Clock = std::chrono::steady_clock;
  const int iterations = options_.iterations;
  std::vector<double> iterationSeconds(static_cast<size_t>(iterations));
  const uint64_t sentBefore = session_.counters().bytesSent;
  const double cpuBefore = processCpuSeconds();
  const Clock::time_point loopStart = Clock::now();
  for (int i = 0; i < iterations; ++i) {
    const Clock::time_point start = Clock::now();
    run(call);
    iterationSeconds[static_cast<size_t>(i)] =
        std::chrono::duration<double>(Clock::now() - start).count();
  }
  const double loopSeconds = std::chrono::duration<double>(Clock::now() - loopStart).count();
  const double cpuSeconds = processCpuSeconds() - cpuBefore;
  const uint64_t sent = session_.counters().bytesSent - sentBefore;

  // One max-reduction for all of it: [loop time, CPU time, bytes sent, each iteration].
  std::vector<double> stats{loopSeconds / iterations, cpuSeconds / iterations,
                            static_cast<double>(sent) / iterations};
  stats.insert(stats.end(), iterationSeconds.begin(), iterationSeconds.end());
  session_.maxOverRanks(&stats);
  result->averageSeconds = stats[0];
  result->cpuSecondsPerIteration = stats[1];
  result->bytesSentPerIteration = stats[2];
  result->iterationSeconds.assign(stats.begin() + 3, stats.end());
  result->medianSeconds = medianOf(result->iterationSeconds);
}

int64_t CollectiveBenchmark::checkedWrongElements(const CollectiveCall& call,
                                                  const Buffers& buffers, const ElementCodec& codec,
                                                  const CheckContext& context) const {
  // Fresh inputs: the timed calls have overwritten them in place.
  prepareCheckBuffers(codec, context, buffers.send, buffers.recv);
  run(call);
  const int64_t wrong = countWrongElements(spec_, codec, context, buffers.recv);
  return static_cast<int64_t>(session_.maxOverRanks(static_cast<double>(wrong)));
}

}  // namespace spccl::perf
