// perf/sparse_cpu_kernels_bench: the CPU kernels of one Hierarchical
// Centralization call at the size of the issue "CPU work per call" (n = 8
// ranks, 16 M f32 per rank, d = 1 %, overlap 0.5, dense in and out), timed
// one at a time in one process, on rank 0's data: the input scan, each
// stage's Packed encoding, the two stage merges from a received Packed
// message, the last merge into the dense output, and for scale the
// output's 4 KiB block clears alone and a read-only scan (countNonZeros).
// docs/perf/sparse_cpu.md ("fourth pass") compares their sum with the
// call's cpu_s_per_iter.
//
//   sparse_cpu_kernels_bench [--benchmark_filter=...]
//       SPCCL_BENCH_ELEMENTS=N (default 16777216)
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/sparse_kernels.h"
#include "sparse/encoding.h"
#include "sparse/received_merge.h"
#include "sparse/set_merge.h"
#include "sparse/sparse_messages.h"

namespace {

namespace sparse = spccl::sparse;
namespace kernels = spccl::kernels;

constexpr int kRanks = 8;
constexpr double kDensity = 0.01;
constexpr size_t kValueBytes = sizeof(float);

size_t elements() {
  const char* text = std::getenv("SPCCL_BENCH_ELEMENTS");
  return text != nullptr ? static_cast<size_t>(std::strtoull(text, nullptr, 10)) : size_t{1} << 24;
}

// Rank r's non-zeros: half drawn from a pool shared by all ranks (overlap
// 0.5), half uniform; values in [1, 2), so no sum is zero. With a pool of
// 0.92 x a rank's draws, a rank holds ~148 K distinct positions at 16 M
// and the 8 ranks' union ~804 K (5.4 x; the perf binary's inputs: 168 K
// and gamma 4.9).
sparse::SparseSet rankSet(std::mt19937_64& rng, const std::vector<uint64_t>& pool,
                          size_t universe) {
  const auto nnz = static_cast<size_t>(kDensity * static_cast<double>(universe));
  sparse::SparseSet set;
  set.positions.reserve(nnz);
  for (size_t i = 0; i < nnz; ++i)
    set.positions.push_back(i % 2 == 0 ? pool[rng() % pool.size()] : rng() % universe);
  std::sort(set.positions.begin(), set.positions.end());
  set.positions.erase(std::unique(set.positions.begin(), set.positions.end()), set.positions.end());
  set.values.resize(set.size() * kValueBytes);
  for (size_t i = 0; i < set.size(); ++i) {
    const float value = 1.0f + static_cast<float>(rng() % 1024) / 1024.0f;
    std::memcpy(&set.values[i * kValueBytes], &value, kValueBytes);
  }
  return set;
}

sparse::SparseSet merged(const sparse::SparseSet& lower, const sparse::SparseSet& higher) {
  sparse::SparseSet out;
  sparse::mergeSets(spcclFloat, kValueBytes, sparse::pairsOf(lower), sparse::pairsOf(higher), &out);
  return out;
}

std::vector<unsigned char> encoded(const sparse::SparseSet& set, size_t universe) {
  std::vector<unsigned char> message;
  sparse::encodeSet(set.positions.data(), set.values.data(), set.size(), universe, kValueBytes,
                    sparse::kAllEncodings, &message);
  return message;
}

// Rank 0's view of one call, made once: its dense input and output, its
// set after each stage, and the messages it receives (from rank 1, ranks
// 2-3 and ranks 4-7).
struct Call {
  size_t universe = elements();
  std::vector<float> input, output;
  sparse::SparseSet stageSet[3];  // rank 0, ranks 0-1, ranks 0-3
  std::vector<unsigned char> received[3];

  Call() : input(universe, 0.0f), output(universe, 0.0f) {
    std::mt19937_64 rng(1);
    std::vector<uint64_t> pool(
        static_cast<size_t>(0.92 * kDensity * static_cast<double>(universe)));
    for (uint64_t& position : pool) position = rng() % universe;
    std::vector<sparse::SparseSet> ranks;
    ranks.reserve(kRanks);
    for (int r = 0; r < kRanks; ++r) ranks.push_back(rankSet(rng, pool, universe));
    for (size_t i = 0; i < ranks[0].size(); ++i)
      std::memcpy(&input[ranks[0].positions[i]], &ranks[0].values[i * kValueBytes], kValueBytes);
    stageSet[0] = ranks[0];
    stageSet[1] = merged(ranks[0], ranks[1]);
    stageSet[2] = merged(stageSet[1], merged(ranks[2], ranks[3]));
    received[0] = encoded(ranks[1], universe);
    received[1] = encoded(merged(ranks[2], ranks[3]), universe);
    received[2] = encoded(merged(merged(ranks[4], ranks[5]), merged(ranks[6], ranks[7])), universe);
  }

  sparse::ReceivedMessage message(int stage) const {
    const std::vector<unsigned char>& m = received[stage];
    return {m.data(), m.size(), m[0], universe, sparse::kAllEncodings, 1};
  }
};

Call& call() {
  static Call instance;  // (its output is the dense merges' scratch)
  return instance;
}

void BM_Scan(benchmark::State& state) {
  const Call& c = call();
  std::vector<uint64_t> indices(c.stageSet[0].size());
  std::vector<float> values(indices.size());
  for (auto _ : state)
    benchmark::DoNotOptimize(kernels::extractNonZeros(
        spcclFloat, c.input.data(), c.universe, indices.data(), values.data(), indices.size()));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * c.universe * kValueBytes));
}

void BM_CountOnly(benchmark::State& state) {
  const Call& c = call();
  for (auto _ : state)
    benchmark::DoNotOptimize(kernels::countNonZeros(spcclFloat, c.input.data(), c.universe));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * c.universe * kValueBytes));
}

void BM_EncodeStage(benchmark::State& state) {
  const sparse::SparseSet& set = call().stageSet[state.range(0)];
  std::vector<unsigned char> buffer;
  size_t bytes = 0;
  for (auto _ : state)
    sparse::encodeSetInto(set.positions.data(), set.values.data(), set.size(), call().universe,
                          kValueBytes, sparse::kAllEncodings, &buffer, &bytes);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * set.size()));
}

void BM_MergeStage(benchmark::State& state) {
  const Call& c = call();
  const auto stage = static_cast<int>(state.range(0));
  sparse::SparseSet scratch, out;
  for (auto _ : state)
    if (sparse::mergeReceivedSet(spcclFloat, sparse::pairsOf(c.stageSet[stage]), c.message(stage),
                                 false, &scratch, &out) != spcclSuccess)
      state.SkipWithError("mergeReceivedSet failed");
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * out.size()));
}

void BM_LastMergeIntoDense(benchmark::State& state) {
  Call& c = call();
  sparse::SparseSet scratch;
  size_t nonZeros = 0;
  for (auto _ : state)
    if (sparse::mergeReceivedSetIntoDense(spcclFloat, sparse::pairsOf(c.stageSet[2]), c.message(2),
                                          false, &scratch, c.output.data(),
                                          &nonZeros) != spcclSuccess)
      state.SkipWithError("mergeReceivedSetIntoDense failed");
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * c.universe * kValueBytes));
  state.counters["nonzeros"] = static_cast<double>(nonZeros);
}

void BM_OutputBlockClears(benchmark::State& state) {
  Call& c = call();
  constexpr size_t kBlock = 1024;  // mergeSumIntoDense's block
  for (auto _ : state) {
    for (size_t base = 0; base < c.universe; base += kBlock)
      std::memset(&c.output[base], 0, std::min(kBlock, c.universe - base) * kValueBytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * c.universe * kValueBytes));
}

BENCHMARK(BM_Scan)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CountOnly)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EncodeStage)->DenseRange(0, 2)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_MergeStage)->DenseRange(0, 1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LastMergeIntoDense)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_OutputBlockClears)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
