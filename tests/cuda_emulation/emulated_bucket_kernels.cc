#include "emulated_bucket_kernels.h"

#include <cstring>
#include <initializer_list>
#include <utility>

#include "kernels/device_sparse/bucket_pairs.h"

namespace spccl::emulation {

namespace {

namespace ds = spccl::kernels::device_sparse;

enum class Step {
  CountRankTiles,
  Scan,
  Locate,
  CountDigits,
  ScatterDigits,
  CountChunkOwners,
  Scatter
};

bool parse(const std::string& name, Step* step) {
  const std::pair<const char*, Step> names[] = {
      {ds::kCountRankTilesKernel, Step::CountRankTiles},
      {ds::kScanKernelOfBuckets, Step::Scan},
      {ds::kLocatePairsKernel, Step::Locate},
      {ds::kCountDigitsKernel, Step::CountDigits},
      {ds::kScatterDigitsKernel, Step::ScatterDigits},
      {ds::kCountChunkOwnersKernel, Step::CountChunkOwners},
      {ds::kScatterChunksKernel, Step::Scatter}};
  for (const auto& [kernel, kind] : names)
    if (name == kernel) {
      *step = kind;
      return true;
    }
  return false;
}

}  // namespace

bool isBucketKernel(const std::string& name) {
  Step step{};
  return parse(name, &step);
}

CuResult prepareBucketKernel(const std::string& name, unsigned gridX, unsigned blockX,
                             void** params, const KernelAccess& access,
                             std::function<void()>* work) {
  Step step{};
  if (!parse(name, &step) || params == nullptr) return kInvalidValue;
  ds::BucketArgs a{};
  std::memcpy(&a, params[0], sizeof(a));
  if (step == Step::Scan ? (gridX != 1 || blockX != ds::kScanThreads) : blockX != ds::kThreads)
    return kInvalidValue;
  if (a.partition.parts == 0 ||
      (a.valueBytes != 1 && a.valueBytes != 2 && a.valueBytes != 4 && a.valueBytes != 8))
    return kInvalidValue;
  const uint64_t parts = a.partition.parts;
  const uint64_t indexBytes = ds::indexWidth(a.indexBytes);
  auto check = [&](std::initializer_list<std::pair<uint64_t, uint64_t>> ranges) {
    for (const auto& [address, bytes] : ranges)
      if (bytes > 0)
        if (const CuResult r = access(address, bytes); r != kSuccess) return r;
    return kSuccess;
  };
  CuResult r = kSuccess;
  switch (step) {
    case Step::CountRankTiles:
      r = check({{a.rankCounts, parts * a.rankTiles * 8}});
      break;
    case Step::Scan:
      r = check({{a.scan, a.scanLength * 8}, {a.scanChunkBase, (ds::kScanThreads + 1) * 8}});
      break;
    case Step::Locate:
      r = check({{a.indices, a.nnz * indexBytes},
                 {a.owners, a.nnz * 4},
                 {a.positions, a.nnz * 8},
                 {a.order, a.nnz * 8},
                 {a.rankCounts, parts * a.rankTiles * 8}});
      break;
    case Step::CountDigits:
    case Step::ScatterDigits:
      r = check({{a.positions, a.nnz * 8},
                 {a.radixFrom, a.nnz * 8},
                 {a.radixTo, step == Step::ScatterDigits ? a.nnz * 8 : 0},
                 {a.digitCounts, ds::kRadixDigits * a.chunks * 8}});
      break;
    case Step::CountChunkOwners:
      r = check(
          {{a.owners, a.nnz * 4}, {a.order, a.nnz * 8}, {a.chunkCounts, parts * a.chunks * 8}});
      break;
    case Step::Scatter:
      r = check({{a.owners, a.nnz * 4},
                 {a.order, a.nnz * 8},
                 {a.positions, a.nnz * 8},
                 {a.values, a.nnz * a.valueBytes},
                 {a.chunkCounts, parts * a.chunks * 8},
                 {a.offsets, (parts + 1) * 8},
                 {a.outPositions, a.nnz * indexBytes},
                 {a.outValues, a.nnz * a.valueBytes}});
      break;
  }
  if (r != kSuccess) return r;
  *work = [name, a] { ds::runBucketKernelOnHost(name.c_str(), a); };
  return kSuccess;
}

}  // namespace spccl::emulation
