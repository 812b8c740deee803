#include "emulated_sparse_kernels.h"

#include <cstring>
#include <vector>

#include "kernels/cpu/sparse/format_dispatch.h"
#include "kernels/device_sparse/extract_nonzeros.h"

namespace spccl::emulation {

namespace {

namespace ds = spccl::kernels::device_sparse;

enum class Step { Count, Scan, Write, ZeroFill, Scatter };

// The step and element type a kernel name names; false for none of ours.
bool parse(const std::string& name, Step* step, spcclDataType_t* type) {
  if (name == ds::kScanKernel) {
    *step = Step::Scan;
    return true;
  }
  const std::pair<const char*, Step> prefixes[] = {{ds::kCountPrefix, Step::Count},
                                                   {ds::kWritePrefix, Step::Write},
                                                   {ds::kZeroFillPrefix, Step::ZeroFill},
                                                   {ds::kScatterPrefix, Step::Scatter}};
  for (const auto& [prefix, kind] : prefixes) {
    const size_t length = std::strlen(prefix);
    if (name.compare(0, length, prefix) != 0) continue;
    for (int t = 0; t < spcclNumTypes; ++t) {
      const char* suffix = ds::typeSuffix(static_cast<spcclDataType_t>(t));
      if (suffix != nullptr && name.substr(length) == suffix) {
        *step = kind;
        *type = static_cast<spcclDataType_t>(t);
        return true;
      }
    }
  }
  return false;
}

// Tile b as block b of the count kernel computes it.
template <typename Format>
void countTiles(const ds::ExtractArgs& args, uint64_t blocks) {
  using Storage = typename Format::Storage;
  const auto* in = reinterpret_cast<const Storage*>(args.input);
  for (uint64_t b = 0; b < blocks; ++b) {
    uint64_t first = 0, last = 0, nonZeros = 0, signedZeros = 0;
    ds::tileRange(args.count, b, &first, &last);
    for (uint64_t i = first; i < last; ++i) {
      nonZeros += ds::isNonZero<Format>(in[i]) ? 1 : 0;
      signedZeros += ds::isSignedZero<Format>(in[i]) ? 1 : 0;
    }
    reinterpret_cast<uint64_t*>(args.blockCounts)[b] = nonZeros;
    reinterpret_cast<uint64_t*>(args.blockSignedZeros)[b] = signedZeros;
  }
}

// The scan kernel's steps, its kScanThreads threads one after the other.
void scanCounts(const ds::ExtractArgs& args) {
  auto* counts = reinterpret_cast<uint64_t*>(args.blockCounts);
  const auto* signedZeros = reinterpret_cast<const uint64_t*>(args.blockSignedZeros);
  std::vector<uint64_t> chunkBase(ds::kScanThreads), chunkSignedZeros(ds::kScanThreads);
  std::vector<uint64_t> first(ds::kScanThreads), last(ds::kScanThreads);
  for (unsigned t = 0; t < ds::kScanThreads; ++t) {
    ds::chunkRange(args.blocks, t, ds::kScanThreads, &first[t], &last[t]);
    chunkBase[t] = ds::sumOf(counts, first[t], last[t]);
    chunkSignedZeros[t] = ds::sumOf(signedZeros, first[t], last[t]);
  }
  auto* totals = reinterpret_cast<uint64_t*>(args.totals);
  totals[0] = ds::exclusiveScan(chunkBase.data(), 0, ds::kScanThreads, 0);
  totals[1] = ds::sumOf(chunkSignedZeros.data(), 0, ds::kScanThreads);
  for (unsigned t = 0; t < ds::kScanThreads; ++t)
    ds::exclusiveScan(counts, first[t], last[t], chunkBase[t]);
}

template <typename Format>
void writeTiles(const ds::ExtractArgs& args, uint64_t blocks) {
  using Storage = typename Format::Storage;
  const auto* in = reinterpret_cast<const Storage*>(args.input);
  for (uint64_t b = 0; b < blocks; ++b) {
    uint64_t first = 0, last = 0;
    ds::tileRange(args.count, b, &first, &last);
    uint64_t slot = reinterpret_cast<const uint64_t*>(args.blockCounts)[b];
    for (uint64_t i = first; i < last; ++i)
      if (ds::isNonZero<Format>(in[i])) ds::writePair<Format>(args, slot++, i, in[i]);
  }
}

template <typename Format>
void zeroFill(const ds::ScatterArgs& args) {
  using Storage = typename Format::Storage;
  for (uint64_t i = 0; i < args.count; ++i) reinterpret_cast<Storage*>(args.output)[i] = Storage{};
}

template <typename Format>
void scatter(const ds::ScatterArgs& args) {
  for (uint64_t i = 0; i < args.nnz; ++i) ds::scatterPair<Format>(args, i);
}

size_t elementBytes(spcclDataType_t type) {
  return spccl::kernels::withFormat(
      type, size_t{0}, [](auto format) { return sizeof(typename decltype(format)::Storage); });
}

}  // namespace

bool isSparseKernel(const std::string& name) {
  Step step{};
  spcclDataType_t type{};
  return parse(name, &step, &type);
}

CuResult prepareSparseKernel(const std::string& name, unsigned gridX, unsigned blockX,
                             void** params, const KernelAccess& access,
                             std::function<void()>* work) {
  Step step{};
  spcclDataType_t type = spcclFloat32;
  if (!parse(name, &step, &type) || params == nullptr) return kInvalidValue;
  const size_t valueBytes = elementBytes(type);
  // A GPU faults on a misaligned element load or store (an f64 after an
  // odd number of uint32 indices, ds::valuesOffset's reason).
  auto aligned = [&](uint64_t values) { return values % valueBytes == 0; };
  auto check = [&](std::initializer_list<std::pair<uint64_t, size_t>> ranges) {
    for (const auto& [address, bytes] : ranges)
      if (bytes > 0)
        if (const CuResult r = access(address, bytes); r != kSuccess) return r;
    return kSuccess;
  };
  if (step == Step::ZeroFill || step == Step::Scatter) {
    ds::ScatterArgs args{};
    std::memcpy(&args, params[0], sizeof(args));
    if (step == Step::Scatter && !aligned(args.values)) return kInvalidValue;
    const CuResult r = check(
        {{args.output, args.count * valueBytes},
         {args.indices, step == Step::Scatter ? args.nnz * ds::indexWidth(args.indexBytes) : 0},
         {args.values, step == Step::Scatter ? args.nnz * valueBytes : 0}});
    if (r != kSuccess) return r;
    *work = [step, type, args] {
      spccl::kernels::withFormat(type, false, [&](auto format) {
        if (step == Step::ZeroFill)
          zeroFill<decltype(format)>(args);
        else
          scatter<decltype(format)>(args);
        return true;
      });
    };
    return kSuccess;
  }
  ds::ExtractArgs args{};
  std::memcpy(&args, params[0], sizeof(args));
  // The kernels' shapes are part of their contract: a tile per block, the
  // scan one block of kScanThreads.
  if (step == Step::Scan ? (gridX != 1 || blockX != ds::kScanThreads) : blockX != ds::kThreads)
    return kInvalidValue;
  if (step == Step::Write && !aligned(args.outValues)) return kInvalidValue;
  const uint64_t blocks = step == Step::Scan ? args.blocks : gridX;
  const CuResult r = check(
      {{args.blockCounts, blocks * 8},
       {args.blockSignedZeros, blocks * 8},
       {args.totals, step == Step::Scan ? 16 : 0},
       {args.input, step == Step::Scan ? 0 : args.count * valueBytes},
       {args.outIndices, step == Step::Write ? args.capacity * ds::indexWidth(args.indexBytes) : 0},
       {args.outValues, step == Step::Write ? args.capacity * valueBytes : 0}});
  if (r != kSuccess) return r;
  *work = [step, type, args, blocks] {
    if (step == Step::Scan) {
      scanCounts(args);
      return;
    }
    spccl::kernels::withFormat(type, false, [&](auto format) {
      if (step == Step::Count)
        countTiles<decltype(format)>(args, blocks);
      else
        writeTiles<decltype(format)>(args, blocks);
      return true;
    });
  };
  return kSuccess;
}

}  // namespace spccl::emulation
