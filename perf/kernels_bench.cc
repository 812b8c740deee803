// perf/kernels_bench: the bandwidth of each CUDA kernel (kernels/cuda), in
// GB/s of the bytes it must move at least (what it reads plus what it
// writes), against a device-to-device cudaMemcpy measured in the same run:
// the `of_copy` column is the kernel's rate over the copy's (the issue's
// target is >= 0.7 for the streaming kernels). Sparse inputs have 1 %
// non-zeros. Each iteration is timed with CUDA events (manual time).
// Hierarchical hashing also reports indices/s (items/s), the figure Zen
// section 4.3 gives for a 214 M-element tensor.
//
//   kernels_bench [--benchmark_filter=...]     SPCCL_BENCH_ELEMENTS=N (default 100000000)
//
// Without a usable CUDA device it says so and measures nothing.
#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/hierarchical_hash_cuda.h"
#include "kernels/cuda/two_pass_bucketing_cuda.h"

namespace {

namespace cuda = spccl::kernels::cuda;
using spccl::kernels::Codec;
using spccl::kernels::QuantizerSpec;

constexpr double kNonZeroFraction = 0.01;

class DeviceMemory {
 public:
  explicit DeviceMemory(size_t bytes) { ok_ = cudaMalloc(&data_, bytes) == cudaSuccess; }
  ~DeviceMemory() {
    if (ok_) cudaFree(data_);
  }
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  template <typename T = void>
  T* get() const {
    return static_cast<T*>(data_);
  }
  bool ok() const { return ok_; }

 private:
  void* data_ = nullptr;
  bool ok_ = false;
};

// The buffers every benchmark draws on, made once: n elements of up to 4
// bytes each, a 1 %-dense f32 tensor and its non-zeros, an encoding.
struct Workspace {
  size_t n;
  size_t nnz;
  DeviceMemory a, b, dst, sparse, residual, indices, values, encoded, ordinals;
  cuda::HierarchicalHashLayout hashLayout;

  explicit Workspace(size_t elements)
      : n(elements),
        nnz(0),
        a(4 * n),
        b(4 * n),
        dst(4 * n),
        sparse(4 * n),
        residual(4 * n),
        indices(8 * n / 50 + 8),
        values(4 * n / 50 + 4),
        encoded(spccl::kernels::quantizedBytes(QuantizerSpec{Codec::Piecewise, 8, 1}, n)),
        ordinals(8 * n / 50 + 8) {}

  bool ok() const {
    return a.ok() && b.ok() && dst.ok() && sparse.ok() && residual.ok() && indices.ok() &&
           values.ok() && encoded.ok() && ordinals.ok();
  }

  // Moderate random values in a and b (as f32 bits, which every benchmarked
  // type reads as finite numbers too), a 1 %-dense tensor, its non-zeros.
  bool fill() {
    std::vector<float> host(n);
    uint64_t state = 88172645463325252ull;
    auto next = [&state] {
      state ^= state << 13, state ^= state >> 7, state ^= state << 17;  // xorshift64
      return state;
    };
    for (auto& v : host) v = static_cast<float>(next() % 2001) / 1000.0f - 1.0f;
    if (cudaMemcpy(a.get(), host.data(), 4 * n, cudaMemcpyHostToDevice) != cudaSuccess)
      return false;
    if (cudaMemcpy(b.get(), host.data(), 4 * n, cudaMemcpyHostToDevice) != cudaSuccess)
      return false;
    for (auto& v : host) v = next() % 10000 < 10000 * kNonZeroFraction ? 1.0f : 0.0f;
    if (cudaMemcpy(sparse.get(), host.data(), 4 * n, cudaMemcpyHostToDevice) != cudaSuccess)
      return false;
    DeviceMemory total(sizeof(size_t));
    if (cuda::extractNonZeros(spcclFloat32, sparse.get(), n, indices.get<uint64_t>(), values.get(),
                              n / 50, total.get<size_t>(), nullptr) != cudaSuccess)
      return false;
    if (cudaMemcpy(&nnz, total.get(), sizeof nnz, cudaMemcpyDeviceToHost) != cudaSuccess)
      return false;
    return cudaMemset(residual.get(), 0, 4 * n) == cudaSuccess && nnz <= n / 50;
  }
};

Workspace* workspace = nullptr;
double copyBytesPerSecond = 0;

// Times launch() per iteration with CUDA events; bytesMoved is what one
// launch must read and write at least; items, when not 0, what it counts
// as done (indices for hashing).
template <typename Launch>
void timeKernel(benchmark::State& state, double bytesMoved, double items, Launch&& launch) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  cudaError_t status = launch();  // warm-up: lazy loading, allocator pools
  cudaDeviceSynchronize();
  double seconds = 0;
  for (auto _ : state) {
    cudaEventRecord(start);
    status = status == cudaSuccess ? launch() : status;
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    if (status != cudaSuccess) {
      state.SkipWithError(cudaGetErrorString(status));
      break;
    }
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    state.SetIterationTime(ms / 1e3);
    seconds += ms / 1e3;
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  if (seconds <= 0) return;
  const double rate = bytesMoved * static_cast<double>(state.iterations()) / seconds;
  state.counters["GB/s"] = rate / 1e9;
  state.counters["of_copy"] = copyBytesPerSecond > 0 ? rate / copyBytesPerSecond : 0;
  if (items > 0)
    state.counters["items/s"] = items * static_cast<double>(state.iterations()) / seconds;
}

double measureCopyBandwidth(const Workspace& w) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  cudaMemcpy(w.dst.get(), w.a.get(), 4 * w.n, cudaMemcpyDeviceToDevice);  // warm-up
  constexpr int kRepeats = 20;
  cudaEventRecord(start);
  for (int i = 0; i < kRepeats; ++i)
    cudaMemcpyAsync(w.dst.get(), w.a.get(), 4 * w.n, cudaMemcpyDeviceToDevice);
  cudaEventRecord(stop);
  cudaEventSynchronize(stop);
  float ms = 0;
  cudaEventElapsedTime(&ms, start, stop);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return 2.0 * 4 * static_cast<double>(w.n) * kRepeats / (ms / 1e3);  // read + write
}

size_t bytesOf(spcclDataType_t type) {
  return type == spcclFloat16 || type == spcclBfloat16 ? 2 : 4;
}

void registerAll() {
  Workspace& w = *workspace;
  const double n = static_cast<double>(w.n), nnz = static_cast<double>(w.nnz);
  auto addCounting = [](const std::string& name, double bytes, double items, auto launch) {
    benchmark::RegisterBenchmark(name.c_str(),
                                 [bytes, items, launch](benchmark::State& state) {
                                   timeKernel(state, bytes, items, launch);
                                 })
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
  };
  auto add = [addCounting](const std::string& name, double bytes, auto launch) {
    addCounting(name, bytes, 0, launch);
  };
  add("copy_d2d/f32", 8 * n,
      [&w] { return cudaMemcpyAsync(w.dst.get(), w.a.get(), 4 * w.n, cudaMemcpyDeviceToDevice); });
  const std::pair<spcclDataType_t, const char*> types[] = {
      {spcclFloat32, "f32"}, {spcclFloat16, "f16"}, {spcclBfloat16, "bf16"}, {spcclInt32, "i32"}};
  for (const auto& [type, name] : types) {
    const double size = static_cast<double>(bytesOf(type));
    add(std::string("reduce_sum/") + name, 3 * size * n, [&w, type = type] {
      return cuda::reduce(type, spcclSum, w.dst.get(), w.a.get(), w.b.get(), w.n, nullptr);
    });
    add(std::string("reduce_max/") + name, 3 * size * n, [&w, type = type] {
      return cuda::reduce(type, spcclMax, w.dst.get(), w.a.get(), w.b.get(), w.n, nullptr);
    });
  }
  add("divide/f32", 8 * n,
      [&w] { return cuda::divide(spcclFloat32, w.dst.get(), w.n, 3, nullptr); });
  add("count_nonzeros/f32_1pct", 4 * n, [&w] {
    return cuda::countNonZeros(spcclFloat32, w.sparse.get(), w.n, w.dst.get<size_t>(), nullptr);
  });
  add("extract_nonzeros/f32_1pct", 4 * n + 12 * nnz, [&w] {
    return cuda::extractNonZeros(spcclFloat32, w.sparse.get(), w.n, w.indices.get<uint64_t>(),
                                 w.values.get(), w.n / 50, w.dst.get<size_t>(), nullptr);
  });
  add("densify/f32_1pct", 4 * n + 12 * nnz, [&w] {
    return cuda::densify(4, w.indices.get<uint64_t>(), w.values.get(), w.nnz, w.dst.get(), w.n,
                         nullptr);
  });
  for (const auto kind : {cuda::ScatterIndices::Distinct, cuda::ScatterIndices::MayRepeat}) {
    const char* label = kind == cuda::ScatterIndices::Distinct ? "distinct" : "may_repeat";
    add(std::string("scatter_add/f32_1pct_") + label, 20 * nnz, [&w, kind] {
      return cuda::scatterReduce(spcclFloat32, spcclSum, w.dst.get(), w.indices.get<uint64_t>(),
                                 w.values.get(), w.nnz, kind, nullptr);
    });
  }
  for (const Codec codec : {Codec::Piecewise, Codec::Linear}) {
    for (const int bits : {4, 8}) {
      const QuantizerSpec spec{codec, bits, 256};
      const std::string label = std::string(codec == Codec::Linear ? "linear" : "piecewise") +
                                std::to_string(bits) + "b/f32";
      const double encoded = static_cast<double>(spccl::kernels::quantizedBytes(spec, w.n));
      add("quantize_" + label, 4 * n + encoded, [&w, spec] {
        return cuda::quantize(spcclFloat32, spec, w.a.get(), w.n, w.encoded.get<unsigned char>(),
                              nullptr, nullptr);
      });
      add("quantize_feedback_" + label, 12 * n + encoded, [&w, spec] {
        return cuda::quantize(spcclFloat32, spec, w.a.get(), w.n, w.encoded.get<unsigned char>(),
                              w.residual.get<float>(), nullptr);
      });
      add("dequantize_" + label, encoded + 4 * n, [&w, spec] {
        return cuda::dequantize(spcclFloat32, spec, w.encoded.get<unsigned char>(), w.n,
                                w.dst.get(), nullptr);
      });
      add("dequantize_add_" + label, encoded + 8 * n, [&w, spec] {
        return cuda::dequantizeAdd(spec, w.encoded.get<unsigned char>(), w.n, w.dst.get<float>(),
                                   nullptr);
      });
    }
  }
  // Zen section 4.3 hashes the non-zeros of a 214 M-element tensor
  // (SPCCL_BENCH_ELEMENTS=214000000): 16 partitions, the CPU's default
  // sizing (r1 = 2x the expected entries, r2 = r1/10); items/s = indices/s.
  constexpr int kParts = 16;
  w.hashLayout.parts = kParts;
  w.hashLayout.partitionSeed = 1;
  const uint64_t r1 = std::max<uint64_t>(8, static_cast<uint64_t>(2.0 * nnz / kParts) + 1);
  w.hashLayout.parallelSlots.assign(kParts, r1);
  w.hashLayout.serialSlots.assign(kParts, std::max<uint64_t>(1, r1 / 10));
  addCounting("hierarchical_hash/1pct_16parts", 16 * nnz, nnz, [&w] {
    cuda::HierarchicalHashResult result;
    return cuda::hierarchicalHashBucketing(w.hashLayout, w.indices.get<uint64_t>(), nullptr, w.nnz,
                                           w.ordinals.get<uint64_t>(), &result, nullptr);
  });
  // Partitioning of the 1 % non-zeros (the "1 % of 100 M elements").
  addCounting("two_pass_bucketing/1pct_16parts", 16 * nnz, nnz, [&w] {
    std::vector<size_t> offsets;
    return cuda::twoPassBucketing(16, 1, w.indices.get<uint64_t>(), nullptr, w.nnz,
                                  w.ordinals.get<uint64_t>(), &offsets, nullptr);
  });
  add("widen_add/f16", 10 * n,
      [&w] { return cuda::widenAdd(spcclFloat16, w.dst.get<float>(), w.a.get(), w.n, nullptr); });
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  int devices = 0;
  const cudaError_t status = cudaGetDeviceCount(&devices);
  if (status != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "kernels_bench: no usable CUDA device (%s); nothing measured\n",
                 status != cudaSuccess ? cudaGetErrorString(status) : "none found");
    return 0;
  }
  const char* env = std::getenv("SPCCL_BENCH_ELEMENTS");
  Workspace w(env ? std::strtoull(env, nullptr, 10) : 100000000);
  if (!w.ok() || !w.fill()) {
    std::fprintf(stderr, "kernels_bench: could not set up %zu elements on the device\n", w.n);
    return 1;
  }
  workspace = &w;
  copyBytesPerSecond = measureCopyBandwidth(w);
  cudaDeviceProp props{};
  cudaGetDeviceProperties(&props, 0);
  benchmark::AddCustomContext("device", props.name);
  benchmark::AddCustomContext("elements", std::to_string(w.n));
  benchmark::AddCustomContext("copy_GB/s", std::to_string(copyBytesPerSecond / 1e9));
  registerAll();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
