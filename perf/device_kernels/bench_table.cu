#include <algorithm>
#include <cstdio>
#include <vector>

#include "device_kernels/bench_table.cuh"
#include "device_kernels/bench_timing.cuh"
#include "device_kernels/device_memory.cuh"
#include "device_kernels/embedded_launches.cuh"

namespace spccl::perf::device_kernels {

namespace {

constexpr uint64_t kRowElements = 4096;  // a token row: 16 KiB of f32
constexpr uint64_t kKeptRowEvery = 4;    // 25 % of the rows kept
constexpr uint64_t kCodecBlock = 256;

__device__ uint32_t mixBits(uint64_t x) {  // splitmix64's finalizer
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return static_cast<uint32_t>((x ^ (x >> 31)) >> 32);
}

// out[i]: a non-zero in [-8, 8) with probability keepBelow / 2^32, else 0.
__global__ void fillInputs(float* out, uint64_t count, uint64_t keepBelow, uint64_t seed) {
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    const uint32_t h = mixBits(i * 0x9e3779b97f4a7c15ull + seed);
    const float v = static_cast<float>(mixBits(i + seed) >> 8) * (16.0f / 16777216.0f) - 8.0f;
    out[i] = h < keepBelow ? (v == 0.0f ? 1.0f : v) : 0.0f;
  }
}

void fill(float* out, uint64_t count, double density, uint64_t seed, cudaStream_t stream) {
  const auto keepBelow = static_cast<uint64_t>(density * 4294967296.0);
  fillInputs<<<gridStrideBlocks(count), 256, 0, stream>>>(out, count, keepBelow, seed);
  checkCuda(cudaGetLastError(), "the input fill");
  checkCuda(cudaStreamSynchronize(stream), "the input fill");
}

struct Bench {
  const BenchOptions& options;
  cudaStream_t stream;
  Timing timing() const { return Timing{options.warmup, options.iterations}; }
};

void benchReduce(const Bench& bench, uint64_t count, int inputCount) {
  double ms = 0;
  {
    std::vector<DeviceBuffer> buffers;
    buffers.reserve(inputCount);
    std::vector<const float*> inputs;
    for (int k = 0; k < inputCount; ++k) {
      buffers.emplace_back(count * sizeof(float));
      fill(buffers.back().as<float>(), count, 1.0, k, bench.stream);
      inputs.push_back(buffers.back().as<float>());
    }
    DeviceBuffer out(count * sizeof(float));
    ms = medianMs(
        [&](cudaStream_t s) { reduceSum(inputs.data(), inputCount, out.as<float>(), count, s); },
        bench.timing(), bench.stream);
  }
  char variant[32];
  std::snprintf(variant, sizeof(variant), "%d inputs", inputCount);
  printRow("reduce_inputs f32", count, variant, (inputCount + 1) * count * sizeof(float), ms,
           bench.timing(), bench.stream);
}

// The extraction (count, scan, write) of the input's non-zeros, then the
// zero fill and scatter of those pairs into a dense output.
void benchSparse(const Bench& bench, uint64_t count, double density) {
  const uint64_t tiles = extractTiles(count);
  const auto capacity = static_cast<uint64_t>(static_cast<double>(count) * density * 1.5) + 65536;
  double extractMs = 0, scatterMs = 0;
  uint64_t nnz = 0;
  {
    DeviceBuffer in(count * sizeof(float)), counts(tiles * 8), signedZeros(tiles * 8), totals(16),
        indices(capacity * 8), values(capacity * sizeof(float)), out(count * sizeof(float));
    fill(in.as<float>(), count, density, 7, bench.stream);
    const ExtractBuffers buffers{counts.as<uint64_t>(), signedZeros.as<uint64_t>(),
                                 totals.as<uint64_t>(), indices.as<uint64_t>(),
                                 values.as<float>(),    capacity};
    extractMs =
        medianMs([&](cudaStream_t s) { extractNonZeros(in.as<float>(), count, buffers, s); },
                 bench.timing(), bench.stream);
    nnz = std::min(totals.download<uint64_t>(1)[0], capacity);
    scatterMs = medianMs(
        [&](cudaStream_t s) {
          zeroFillAndScatter(out.as<float>(), count, indices.as<uint64_t>(), values.as<float>(),
                             nnz, s);
        },
        bench.timing(), bench.stream);
  }
  char variant[32];
  std::snprintf(variant, sizeof(variant), "density %g %%", density * 100);
  constexpr uint64_t kPairBytes = 8 + sizeof(float);
  // At least: the input read once and the pairs written; the output
  // written once and the pairs read.
  printRow("extract_nonzeros f32", count, variant, count * sizeof(float) + nnz * kPairBytes,
           extractMs, bench.timing(), bench.stream);
  printRow("zero_fill+scatter f32", count, variant, count * sizeof(float) + nnz * kPairBytes,
           scatterMs, bench.timing(), bench.stream);
}

void benchRows(const Bench& bench, uint64_t count) {
  const uint64_t tokens = count / kRowElements, rowBytes = kRowElements * sizeof(float);
  std::vector<uint64_t> rows;
  for (uint64_t t = 0; t < tokens; t += kKeptRowEvery) rows.push_back(t);
  if (rows.empty()) return;
  double gatherMs = 0, scatterMs = 0;
  {
    DeviceBuffer tensor(tokens * rowBytes), packed(rows.size() * rowBytes),
        rowList(rows.size() * 8);
    fill(tensor.as<float>(), tokens * kRowElements, 1.0, 3, bench.stream);
    rowList.upload(rows);
    const RowsBuffers buffers{tensor.as<void>(), packed.as<void>(), rowList.as<uint64_t>(),
                              rows.size(),       rowBytes,          tokens};
    gatherMs =
        medianMs([&](cudaStream_t s) { gatherRows(buffers, s); }, bench.timing(), bench.stream);
    scatterMs =
        medianMs([&](cudaStream_t s) { scatterRows(buffers, s); }, bench.timing(), bench.stream);
  }
  char variant[32];
  std::snprintf(variant, sizeof(variant), "%zu of %llu rows", rows.size(),
                static_cast<unsigned long long>(tokens));
  const uint64_t moved = 2 * rows.size() * rowBytes + rows.size() * 8;
  printRow("gather_rows 16KiB", count, variant, moved, gatherMs, bench.timing(), bench.stream);
  printRow("scatter_rows 16KiB", count, variant, moved, scatterMs, bench.timing(), bench.stream);
}

void benchCodecs(const Bench& bench, uint64_t count, int bits) {
  const kernels::QuantizerSpec spec{kernels::Codec::Piecewise, bits, kCodecBlock};
  const uint64_t encodedBytes = kernels::quantizedBytes(spec, count);
  const uint64_t elementBytes = count * sizeof(float);
  double encodeMs = 0, encodeResidualMs = 0, decodeMs = 0, accumulateMs = 0;
  {
    DeviceBuffer in(elementBytes), residual(elementBytes), encoded(encodedBytes), out(elementBytes);
    fill(in.as<float>(), count, 1.0, 5, bench.stream);
    checkCuda(cudaMemsetAsync(residual.as<void>(), 0, elementBytes, bench.stream), "cudaMemset");
    const auto* input = in.as<float>();
    auto* codes = encoded.as<unsigned char>();
    encodeMs = medianMs([&](cudaStream_t s) { encode(spec, input, nullptr, codes, count, s); },
                        bench.timing(), bench.stream);
    encodeResidualMs = medianMs(
        [&](cudaStream_t s) { encode(spec, input, residual.as<float>(), codes, count, s); },
        bench.timing(), bench.stream);
    decodeMs = medianMs([&](cudaStream_t s) { decode(spec, codes, out.as<float>(), count, s); },
                        bench.timing(), bench.stream);
    accumulateMs =
        medianMs([&](cudaStream_t s) { accumulate(spec, input, codes, out.as<float>(), count, s); },
                 bench.timing(), bench.stream);
  }
  char variant[32];
  std::snprintf(variant, sizeof(variant), "piecewise %d bits", bits);
  printRow("encode f32", count, variant, elementBytes + encodedBytes, encodeMs, bench.timing(),
           bench.stream);
  printRow("encode f32 +residual", count, variant, 3 * elementBytes + encodedBytes,
           encodeResidualMs, bench.timing(), bench.stream);
  printRow("decode f32", count, variant, encodedBytes + elementBytes, decodeMs, bench.timing(),
           bench.stream);
  printRow("accumulate f32", count, variant, encodedBytes + 2 * elementBytes, accumulateMs,
           bench.timing(), bench.stream);
}

}  // namespace

void printBenchTable(const BenchOptions& options) {
  cudaStream_t stream = nullptr;
  checkCuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  const Bench bench{options, stream};
  printHeader();
  for (const uint64_t count : options.sizes) {
    for (const int inputs : {2, 8}) benchReduce(bench, count, inputs);
    for (const double density : {0.001, 0.01, 0.05}) benchSparse(bench, count, density);
    benchRows(bench, count);
    for (const int bits : {4, 8}) benchCodecs(bench, count, bits);
  }
  cudaStreamDestroy(stream);
}

}  // namespace spccl::perf::device_kernels
