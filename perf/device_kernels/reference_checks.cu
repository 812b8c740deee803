#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "device_kernels/device_memory.cuh"
#include "device_kernels/embedded_launches.cuh"
#include "device_kernels/reference_checks.cuh"
#include "kernels/kernels.h"

namespace spccl::perf::device_kernels {

namespace {

constexpr uint64_t kCheckCount = 1'000'003;

template <typename T>
bool sameBits(const std::vector<T>& got, const std::vector<T>& want) {
  return got.size() == want.size() &&
         std::memcmp(got.data(), want.data(), got.size() * sizeof(T)) == 0;
}

int report(const char* check, bool passed) {
  std::printf("# check %-34s %s\n", check, passed ? "OK" : "MISMATCH");
  return passed ? 0 : 1;
}

void finishLaunches(const char* what) {
  checkCuda(cudaGetLastError(), what);
  checkCuda(cudaDeviceSynchronize(), what);
}

// Uniform values in [-8, 8); a `density` fraction kept, the rest 0 with
// one in 64 of the zeros -0.0 (a zero the extraction must skip and count).
std::vector<float> randomValues(uint64_t count, double density, uint32_t seed) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<float> value(-8.0f, 8.0f);
  std::uniform_real_distribution<double> keep(0.0, 1.0);
  std::vector<float> values(count);
  for (float& v : values)
    v = keep(random) < density ? value(random) : (random() % 64 == 0 ? -0.0f : 0.0f);
  return values;
}

int checkReduce() {
  constexpr int kInputs = 3;
  std::vector<std::vector<float>> host;
  std::vector<DeviceBuffer> device;
  device.reserve(kInputs);
  std::vector<const float*> inputs;
  for (int k = 0; k < kInputs; ++k) {
    host.push_back(randomValues(kCheckCount, 1.0, 11 + k));
    device.emplace_back(kCheckCount * sizeof(float));
    device.back().upload(host.back());
    inputs.push_back(device.back().as<float>());
  }
  DeviceBuffer out(kCheckCount * sizeof(float));
  reduceSum(inputs.data(), kInputs, out.as<float>(), kCheckCount, nullptr);
  finishLaunches("reduce");
  // Left to right, each step rounded to f32: the CPU's pairwise reduce.
  std::vector<float> want = host[0];
  const auto sum = kernels::cpuKernels().reduce[spcclFloat32][spcclSum];
  for (int k = 1; k < kInputs; ++k) sum(want.data(), want.data(), host[k].data(), kCheckCount);
  return report("reduce f32 sum, 3 inputs", sameBits(out.download<float>(kCheckCount), want));
}

int checkExtractAndScatter() {
  const std::vector<float> host = randomValues(kCheckCount, 0.01, 21);
  std::vector<uint64_t> wantIndices;
  std::vector<float> wantValues;
  uint64_t wantSignedZeros = 0;
  for (uint64_t i = 0; i < kCheckCount; ++i) {
    if (host[i] != 0.0f) {
      wantIndices.push_back(i);
      wantValues.push_back(host[i]);
    } else if (std::signbit(host[i])) {
      ++wantSignedZeros;
    }
  }
  const uint64_t nnz = wantIndices.size(), tiles = extractTiles(kCheckCount);
  DeviceBuffer in(kCheckCount * sizeof(float)), counts(tiles * 8), signedZeros(tiles * 8),
      totals(16), indices(nnz * 8), values(nnz * sizeof(float));
  in.upload(host);
  extractNonZeros(
      in.as<float>(), kCheckCount,
      ExtractBuffers{counts.as<uint64_t>(), signedZeros.as<uint64_t>(), totals.as<uint64_t>(),
                     indices.as<uint64_t>(), values.as<float>(), nnz},
      nullptr);
  finishLaunches("extraction");
  const std::vector<uint64_t> gotTotals = totals.download<uint64_t>(2);
  int failed = report("extract f32 (1 %, -0.0 counted)",
                      gotTotals[0] == nnz && gotTotals[1] == wantSignedZeros &&
                          sameBits(indices.download<uint64_t>(nnz), wantIndices) &&
                          sameBits(values.download<float>(nnz), wantValues));

  DeviceBuffer out(kCheckCount * sizeof(float));
  checkCuda(cudaMemset(out.as<float>(), 0xff, out.bytes()), "cudaMemset");
  zeroFillAndScatter(out.as<float>(), kCheckCount, indices.as<uint64_t>(), values.as<float>(), nnz,
                     nullptr);
  finishLaunches("zero fill and scatter");
  std::vector<float> wantDense(kCheckCount, 0.0f);
  for (uint64_t p = 0; p < nnz; ++p) wantDense[wantIndices[p]] = wantValues[p];
  failed +=
      report("zero fill + scatter f32", sameBits(out.download<float>(kCheckCount), wantDense));
  return failed;
}

int checkRows() {
  constexpr uint64_t kTokens = 301, kRowBytes = 4 * 97;  // odd sizes: no aligned shortcut
  std::vector<uint64_t> rows;
  for (uint64_t t = kTokens; t-- > 0;)
    if (t % 3 != 1) rows.push_back(t);  // descending: order is the caller's
  std::mt19937 random(31);
  std::vector<unsigned char> tensor(kTokens * kRowBytes), packed(rows.size() * kRowBytes);
  for (unsigned char& b : tensor) b = static_cast<unsigned char>(random());
  for (unsigned char& b : packed) b = static_cast<unsigned char>(random());
  DeviceBuffer deviceTensor(tensor.size()), devicePacked(packed.size()),
      deviceRows(rows.size() * 8);
  deviceTensor.upload(tensor);
  deviceRows.upload(rows);
  const RowsBuffers buffers{deviceTensor.as<void>(),
                            devicePacked.as<void>(),
                            deviceRows.as<uint64_t>(),
                            rows.size(),
                            kRowBytes,
                            kTokens};
  gatherRows(buffers, nullptr);
  finishLaunches("gather rows");
  std::vector<unsigned char> wantPacked(packed.size());
  for (size_t r = 0; r < rows.size(); ++r)
    std::memcpy(&wantPacked[r * kRowBytes], &tensor[rows[r] * kRowBytes], kRowBytes);
  int failed = report("gather rows",
                      sameBits(devicePacked.download<unsigned char>(packed.size()), wantPacked));

  devicePacked.upload(packed);
  scatterRows(buffers, nullptr);
  finishLaunches("scatter rows");
  for (size_t r = 0; r < rows.size(); ++r)
    std::memcpy(&tensor[rows[r] * kRowBytes], &packed[r * kRowBytes], kRowBytes);
  failed +=
      report("scatter rows", sameBits(deviceTensor.download<unsigned char>(tensor.size()), tensor));
  return failed;
}

// Encode with error feedback, decode, accumulate: the CPU codec's bytes,
// residuals and values.
int checkCodec(const kernels::QuantizerSpec& spec) {
  const kernels::KernelTable& cpu = kernels::cpuKernels();
  const std::vector<float> in = randomValues(kCheckCount, 1.0, 41);
  std::vector<float> residual = randomValues(kCheckCount, 1.0, 42);
  for (float& r : residual) r /= 64.0f;
  const size_t bytes = kernels::quantizedBytes(spec, kCheckCount);
  DeviceBuffer deviceIn(kCheckCount * sizeof(float)), deviceResidual(kCheckCount * sizeof(float)),
      encoded(bytes), out(kCheckCount * sizeof(float));
  deviceIn.upload(in);
  deviceResidual.upload(residual);
  encode(spec, deviceIn.as<float>(), deviceResidual.as<float>(), encoded.as<unsigned char>(),
         kCheckCount, nullptr);
  finishLaunches("encode");
  std::vector<unsigned char> wantEncoded(bytes);
  cpu.quantize[spcclFloat32](spec, in.data(), kCheckCount, wantEncoded.data(), residual.data());
  char name[64];
  std::snprintf(name, sizeof(name), "encode %s %d bits (+residual)",
                spec.codec == kernels::Codec::Linear ? "linear" : "piecewise", spec.bits);
  int failed = report(name, sameBits(encoded.download<unsigned char>(bytes), wantEncoded) &&
                                sameBits(deviceResidual.download<float>(kCheckCount), residual));

  decode(spec, encoded.as<unsigned char>(), out.as<float>(), kCheckCount, nullptr);
  finishLaunches("decode");
  std::vector<float> want(kCheckCount);
  cpu.dequantize[spcclFloat32](spec, wantEncoded.data(), kCheckCount, want.data());
  std::snprintf(name, sizeof(name), "decode %d bits", spec.bits);
  failed += report(name, sameBits(out.download<float>(kCheckCount), want));

  accumulate(spec, deviceIn.as<float>(), encoded.as<unsigned char>(), out.as<float>(), kCheckCount,
             nullptr);
  finishLaunches("accumulate");
  std::vector<float> acc(kCheckCount, 0.0f);
  cpu.widenAdd[spcclFloat32](acc.data(), in.data(), kCheckCount);
  cpu.dequantizeAdd(spec, wantEncoded.data(), kCheckCount, acc.data());
  std::snprintf(name, sizeof(name), "accumulate %d bits", spec.bits);
  failed += report(name, sameBits(out.download<float>(kCheckCount), acc));
  return failed;
}

}  // namespace

int runReferenceChecks() {
  int failed = checkReduce() + checkExtractAndScatter() + checkRows();
  for (const kernels::Codec codec : {kernels::Codec::Piecewise, kernels::Codec::Linear})
    for (const int bits : {4, 8}) failed += checkCodec(kernels::QuantizerSpec{codec, bits, 256});
  return failed;
}

}  // namespace spccl::perf::device_kernels
