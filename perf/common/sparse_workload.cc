#include "common/sparse_workload.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <queue>
#include <utility>

#include "common/element_codec.h"

namespace spccl::perf {

namespace {

// SplitMix64 (Steele, Lea, Flood 2014): tiny, fast, and the same on every
// platform, unlike the distributions of <random>.
uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

class Random {
 public:
  explicit Random(uint64_t seed) : state_(mix64(seed)) {}
  uint64_t next() {
    state_ += 0x9e3779b97f4a7c15ull;
    return mix64(state_);
  }
  // Uniform in [0, bound), by a 128-bit multiply (Lemire); the bias is
  // below 2^-40 for any bound we use, far under what a benchmark can see.
  uint64_t below(uint64_t bound) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(next()) * bound) >> 64);
  }
  // Uniform in (0, 1]: log() of it is finite.
  double openUnit() { return static_cast<double>((next() >> 11) + 1) * 0x1p-53; }

 private:
  uint64_t state_;
};

constexpr uint64_t kSharedStream = 0x5348415245440000ull;  // "SHARED"

uint64_t rankStream(uint64_t seed, int rank) {
  return mix64(seed ^ mix64(static_cast<uint64_t>(rank) + 1));
}

// k distinct values of [0, n), ascending: Floyd's algorithm (Bentley &
// Floyd, CACM 1987), O(k) draws whatever k is, plus an n-bit set.
std::vector<uint64_t> sampleAscending(uint64_t n, uint64_t k, Random& random) {
  std::vector<bool> chosen(n, false);
  for (uint64_t j = n - k; j < n; ++j) {
    const uint64_t t = random.below(j + 1);
    chosen[chosen[t] ? j : t] = true;
  }
  std::vector<uint64_t> sample;
  sample.reserve(k);
  for (uint64_t i = 0; i < n; ++i) {
    if (chosen[i]) sample.push_back(i);
  }
  return sample;
}

// Maps positions among the rows that are not excluded (ascending) to row
// ids; excluded is ascending.
std::vector<uint64_t> skipExcluded(std::vector<uint64_t> positions,
                                   const std::vector<uint64_t>& excluded) {
  size_t skipped = 0;
  for (uint64_t& position : positions) {
    while (skipped < excluded.size() && excluded[skipped] <= position + skipped) ++skipped;
    position += skipped;
  }
  return positions;
}

// k rows of [0, rows) outside `excluded`, drawn without replacement with
// weight (row + 1)^-s: Efraimidis & Spirakis (IPL 2006), keep the k largest
// keys log(u) / weight. A min-heap of k keys keeps memory at O(k).
std::vector<uint64_t> sampleZipfRows(uint64_t rows, uint64_t k, double exponent,
                                     const std::vector<uint64_t>& excluded, Random& random) {
  using Keyed = std::pair<double, uint64_t>;
  std::priority_queue<Keyed, std::vector<Keyed>, std::greater<Keyed>> best;
  size_t next = 0;
  for (uint64_t row = 0; row < rows && k > 0; ++row) {
    if (next < excluded.size() && excluded[next] == row) {
      ++next;
      continue;
    }
    const double key =
        std::log(random.openUnit()) * std::pow(static_cast<double>(row + 1), exponent);
    if (best.size() < k) {
      best.emplace(key, row);
    } else if (key > best.top().first) {
      best.pop();
      best.emplace(key, row);
    }
  }
  std::vector<uint64_t> chosen;
  chosen.reserve(best.size());
  for (; !best.empty(); best.pop()) chosen.push_back(best.top().second);
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

std::vector<uint64_t> sampleRows(uint64_t rows, uint64_t k, double zipfExponent,
                                 const std::vector<uint64_t>& excluded, Random& random) {
  if (zipfExponent > 0.0) return sampleZipfRows(rows, k, zipfExponent, excluded, random);
  return skipExcluded(sampleAscending(rows - excluded.size(), k, random), excluded);
}

std::vector<uint64_t> nonZeroRows(const SparseWorkloadSpec& spec, uint64_t rows, int rank) {
  const uint64_t wanted =
      std::min<uint64_t>(rows, static_cast<uint64_t>(std::llround(spec.density * rows)));
  const uint64_t sharedRows = static_cast<uint64_t>(std::llround(spec.overlap * wanted));
  // Twice the shared count, as the Gloo peer: two ranks share about half
  // of their shared parts, and the union keeps growing with n.
  const uint64_t poolRows = std::min(rows, 2 * sharedRows);
  const uint64_t privateRows = std::min(wanted - sharedRows, rows - poolRows);
  // Near full density the pool leaves too little room outside it: the
  // rank then takes more of the pool, keeping the density, not the overlap.
  const uint64_t fromPool = wanted - privateRows;

  Random sharedRandom(spec.seed ^ kSharedStream);
  const std::vector<uint64_t> pool =
      sampleRows(rows, poolRows, spec.zipfExponent, {}, sharedRandom);
  Random rankRandom(rankStream(spec.seed, rank));
  std::vector<uint64_t> chosen;
  chosen.reserve(wanted);
  for (const uint64_t position : sampleAscending(pool.size(), fromPool, rankRandom)) {
    chosen.push_back(pool[position]);
  }
  const std::vector<uint64_t> own =
      sampleRows(rows, privateRows, spec.zipfExponent, pool, rankRandom);
  chosen.insert(chosen.end(), own.begin(), own.end());
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

}  // namespace

std::vector<uint64_t> sparseNonZeroIndices(const SparseWorkloadSpec& spec, size_t count, int rank) {
  const size_t width = std::max<size_t>(spec.rowWidth, 1);
  std::vector<uint64_t> indices;
  const std::vector<uint64_t> rows = nonZeroRows(spec, count / width, rank);
  indices.reserve(rows.size() * width);
  for (const uint64_t row : rows) {
    for (size_t column = 0; column < width; ++column) indices.push_back(row * width + column);
  }
  return indices;
}

int sparseInputValue(uint64_t seed, int rank, uint64_t index) {
  return 1 + static_cast<int>(mix64(rankStream(seed, rank) ^ mix64(index)) % kMaxInputValue);
}

size_t fillSparseInput(const SparseWorkloadSpec& spec, size_t count, int rank, spcclDataType_t type,
                       void* buffer) {
  // All-zero bytes are 0 in every spccl type.
  std::memset(buffer, 0, count * spcclTypeSize(type));
  const ElementCodec& codec = *elementCodecFor(type);
  const std::vector<uint64_t> indices = sparseNonZeroIndices(spec, count, rank);
  for (const uint64_t index : indices) {
    codec.store(buffer, index, sparseInputValue(spec.seed, rank, index));
  }
  return indices.size();
}

}  // namespace spccl::perf
