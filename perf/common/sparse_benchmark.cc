#include "common/sparse_benchmark.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "common/collective_spec.h"
#include "common/element_codec.h"
#include "common/sparse_check.h"
#include "common/timed_loop.h"

namespace spccl::perf {

namespace {

// A value no correct result holds where the call wrote nothing: NaN in
// every float type, -1 in every integer type.
constexpr unsigned char kPoisonByte = 0xff;

void fillBandwidth(const SparseInput& input, int nranks, ModeResult* mode) {
  const double bytes = static_cast<double>(input.count * spcclTypeSize(input.type));
  mode->algBandwidth = mode->averageSeconds > 0.0 ? bytes / mode->averageSeconds / 1.0e9 : 0.0;
  // As all_reduce_perf, so the two rows compare: the dense algorithm's
  // bus factor, whatever the sparse one really sends (the sent column says).
  mode->busBandwidth = mode->algBandwidth * bus_factor::allReduce(nranks);
}

}  // namespace

SparseBenchmark::SparseBenchmark(const PerfOptions& options, const SparseOptions& sparseOptions,
                                 const PerfSession& session)
    : options_(options), sparseOptions_(sparseOptions), session_(session) {
  if (options.deviceBuffers) device_ = session.device();
}

SparseBenchmark::~SparseBenchmark() {
  if (!device_) return;
  device_->release(deviceInput_);
  device_->release(deviceResult_);
}

const void* SparseBenchmark::callInput(const SparseInput& input) const {
  return device_ ? deviceInput_ : input.data;
}

void* SparseBenchmark::callResult(void* host) const { return device_ ? deviceResult_ : host; }

// Each call is waited for, so that its time is the call's.
void SparseBenchmark::settle() const {
  if (device_) device_->synchronize();
}

void SparseBenchmark::fetchResult(void* host) const {
  if (device_) device_->download(host, deviceResult_, result_.size());
}

void SparseBenchmark::sparseAllReduce(const SparseInput& input, spcclRedOp_t op, uint64_t tag,
                                      void* result) {
  spcclSparseOptions_t call = SPCCL_SPARSE_OPTIONS_INITIALIZER;
  call.algorithm = sparseOptions_.algorithm;
  call.encoding = sparseOptions_.encoding;
  call.partitioner = sparseOptions_.partitioner;
  call.tag = tag;
  if (!sparseOptions_.cooInterface) {
    session_.require(spcclSparseAllReduceWithOptions(
                         callInput(input), callResult(result), input.count, input.type, op, &call,
                         session_.comm(), device_ ? device_->stream() : nullptr),
                     "spcclSparseAllReduceWithOptions");
    settle();
    return;
  }
  session_.require(spcclSparseAllReduceCooToCoo(cooInput_.indices.data(), spcclIndexUint64,
                                                cooInput_.values.data(), cooInput_.nnz, input.count,
                                                input.type, op, cooOutput_.indices.data(),
                                                cooOutput_.values.data(), cooOutput_.indices.size(),
                                                &cooOutput_.nnz, &call, session_.comm(), nullptr),
                   "spcclSparseAllReduceCooToCoo");
}

void SparseBenchmark::prepareCoo(const SparseInput& input) {
  const ElementCodec& codec = *elementCodecFor(input.type);
  const size_t valueBytes = spcclTypeSize(input.type);
  const auto* bytes = static_cast<const unsigned char*>(input.data);
  cooInput_.indices.clear();
  cooInput_.values.clear();
  for (size_t i = 0; i < input.count; ++i) {
    if (codec.load(input.data, i) == 0.0) continue;
    cooInput_.indices.push_back(i);
    cooInput_.values.insert(cooInput_.values.end(), bytes + i * valueBytes,
                            bytes + (i + 1) * valueBytes);
  }
  cooInput_.nnz = cooInput_.indices.size();
  std::vector<double> total{static_cast<double>(cooInput_.nnz)};
  session_.sumOverRanks(&total);
  const size_t capacity = std::min(input.count, static_cast<size_t>(total[0]));
  cooOutput_.indices.assign(capacity, 0);  // touched here, not in a timed call
  cooOutput_.values.assign(capacity * valueBytes, 0);
}

void SparseBenchmark::densifyCooResult(const SparseInput& input, void* result) const {
  const size_t valueBytes = spcclTypeSize(input.type);
  auto* out = static_cast<unsigned char*>(result);
  std::memset(out, 0, input.count * valueBytes);
  for (size_t i = 0; i < cooOutput_.nnz; ++i)
    std::memcpy(out + cooOutput_.indices[i] * valueBytes, &cooOutput_.values[i * valueBytes],
                valueBytes);
}

void SparseBenchmark::denseAllReduce(const SparseInput& input, spcclRedOp_t op,
                                     void* result) const {
  session_.require(spcclAllReduce(callInput(input), callResult(result), input.count, input.type, op,
                                  session_.comm(), device_ ? device_->stream() : nullptr),
                   "spcclAllReduce");
  settle();
}

SparseSizeResult SparseBenchmark::measure(const SparseInput& input, spcclRedOp_t op) {
  const size_t bytes = input.count * spcclTypeSize(input.type);
  result_.assign(bytes, 0);  // pages touched here, not in the first timed call
  if (device_) {
    if (bytes > deviceBytes_) {
      device_->release(deviceInput_);
      device_->release(deviceResult_);
      deviceInput_ = device_->allocate(bytes);
      deviceResult_ = device_->allocate(bytes);
      deviceBytes_ = bytes;
    }
    device_->upload(deviceInput_, input.data, bytes);
  }
  SparseSizeResult row;
  row.bytes = bytes;
  row.count = input.count;
  row.type = input.type;
  row.opName = spcclOpName(op);
  row.overlap = input.overlap;
  row.tag = sparseTagFor(sparseOptions_, input.count, input.type, op);
  if (sparseOptions_.cooInterface) prepareCoo(input);

  const auto sparse = [&] { sparseAllReduce(input, op, row.tag, result_.data()); };
  const auto dense = [&] { denseAllReduce(input, op, result_.data()); };
  for (int i = 0; i <= options_.warmupIterations; ++i) sparse();
  for (int i = 0; i <= options_.warmupIterations; ++i) dense();
  session_.barrier();
  timeIterations(session_, options_.iterations, sparse, &row.sparse);
  readStats(row.tag, &row);
  session_.barrier();
  timeIterations(session_, options_.iterations, dense, &row.dense);
  fillBandwidth(input, session_.nranks(), &row.sparse);
  fillBandwidth(input, session_.nranks(), &row.dense);
  fetchResult(result_.data());
  describeInputs(input, &row);  // result_ holds the dense result now
  if (options_.check) check(input, op, row.tag, &row);
  return row;
}

void SparseBenchmark::readStats(uint64_t tag, SparseSizeResult* row) const {
  spcclSparseStats_t stats{};
  stats.size = sizeof(stats);
  session_.require(spcclSparseGetStats(session_.comm(), tag, &stats), "spcclSparseGetStats");
  // The planner decides from figures every rank shares, so ranks agree;
  // [max, -min] of the choice says whether they did.
  std::vector<double> maxima{static_cast<double>(stats.algorithm),
                             -static_cast<double>(stats.algorithm),
                             static_cast<double>(stats.bytesSent),
                             static_cast<double>(stats.bytesReceived),
                             static_cast<double>(stats.predictedBytesSent),
                             stats.pushImbalance,
                             stats.pullImbalance};
  session_.maxOverRanks(&maxima);
  std::vector<double> sentSum{static_cast<double>(stats.bytesSent)};
  session_.sumOverRanks(&sentSum);
  const bool agreed = maxima[0] == -maxima[1];
  row->algorithm = agreed ? spcclSparseAlgorithmName(stats.algorithm) : "mixed";
  row->reason.assign(stats.reason, strnlen(stats.reason, sizeof(stats.reason)));
  for (int a = 0; a < spcclSparseNumAlgorithms; ++a) {
    row->predictedSeconds[static_cast<size_t>(a)] = stats.predictedSeconds[a];
  }
  row->plannerDensity = stats.density;
  row->plannerGamma = stats.gamma;
  row->statsBytesSent = maxima[2];
  row->statsBytesSentMean = sentSum[0] / session_.nranks();
  row->statsBytesReceived = maxima[3];
  row->predictedBytesSent = maxima[4];
  row->pushImbalance = maxima[5];
  row->pullImbalance = maxima[6];
}

void SparseBenchmark::describeInputs(const SparseInput& input, SparseSizeResult* row) const {
  std::vector<double> localNonZeros{static_cast<double>(input.nonZeros)};
  session_.sumOverRanks(&localNonZeros);
  const double meanNonZeros = localNonZeros[0] / session_.nranks();
  row->density = input.count > 0 ? meanNonZeros / static_cast<double>(input.count) : 0.0;
  const size_t resultNonZeros = countNonZeros(input.type, input.count, result_.data());
  row->gamma = meanNonZeros > 0.0 ? static_cast<double>(resultNonZeros) / meanNonZeros : 0.0;
}

void SparseBenchmark::check(const SparseInput& input, spcclRedOp_t op, uint64_t tag,
                            SparseSizeResult* row) {
  reference_.resize(result_.size());
  std::memset(result_.data(), kPoisonByte, result_.size());
  if (device_) device_->upload(deviceResult_, result_.data(), result_.size());
  sparseAllReduce(input, op, tag, result_.data());
  fetchResult(result_.data());
  if (sparseOptions_.cooInterface) densifyCooResult(input, result_.data());
  denseAllReduce(input, op, reference_.data());
  fetchResult(reference_.data());

  // Replayed floats are compared up to reassociation, which needs Σ|x| per
  // element: one more all-reduce, of the absolute inputs in float64.
  std::vector<double> absoluteSums;
  if (!input.exact) {
    const ElementCodec& codec = *elementCodecFor(input.type);
    absoluteSums.resize(input.count);
    for (size_t i = 0; i < input.count; ++i) absoluteSums[i] = std::fabs(codec.load(input.data, i));
    session_.sumOverRanks(&absoluteSums);
  }
  const MismatchRule rule = mismatchRuleFor(input.type, op, session_.nranks(), input.exact,
                                            absoluteSums.empty() ? nullptr : absoluteSums.data());
  const int64_t wrong =
      countMismatches(input.type, input.count, result_.data(), reference_.data(), rule);
  row->sparse.wrongElements =
      static_cast<int64_t>(session_.maxOverRanks(static_cast<double>(wrong)));
  row->divergentRanks = divergentRanks(result_);
}

int64_t SparseBenchmark::divergentRanks(const std::vector<unsigned char>& result) const {
  const uint64_t mine = contentHash(result.data(), result.size());
  std::vector<uint64_t> all(static_cast<size_t>(session_.nranks()));
  session_.require(spcclAllGather(&mine, all.data(), 1, spcclUint64, session_.comm(), nullptr),
                   "spcclAllGather (result hashes)");
  int64_t divergent = 0;
  for (const uint64_t hash : all) divergent += hash != all[0];
  return divergent;
}

}  // namespace spccl::perf
