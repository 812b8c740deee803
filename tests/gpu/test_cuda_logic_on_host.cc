// The per-thread work of CUDA kernels, run on the CPU in plain loops that
// stand in for the grids, against the CPU kernels. This needs no GPU and
// runs everywhere: it checks the kernels' indexing and logic, not CUDA
// itself (launches, shuffles, atomics under contention, memory), which the
// test_gpu_* binaries do.
//  - Codecs (kernels/cuda/quantize_groups.h): a warp's lanes computing a
//    block's scale (strided accumulation, butterfly merge), one call per
//    8-code group, in the order of either quantize path (block by block
//    when blocks are multiples of 8, else all scales first), and for the
//    decoder; the result must be the CPU codec's, byte for byte.
//  - Hierarchical hashing (kernels/cuda/hash_insert.h): insertEntry() for
//    one entry after another, the rounds grown as the driver grows them;
//    run serially it must place every entry where the CPU's single-threaded
//    hashing does, so buckets, order and statistics are equal.
//  - scatterReduce with repeats (kernels/cuda/scatter_runs.h): every
//    sorted entry's foldRunAt(), in reverse order to show the runs are
//    independent, against the CPU's scatterReduce, bit for bit.
//  - Two-pass bucket boundaries (kernels/cuda/bucket_offsets.h).
//  - The top-k token order (kernels/cuda/token_rank_key.h): a stable sort
//    by key, as CUB's, must choose the CPU's tokens.
//  - Bitmap bytes (kernels/cuda/bitmap_bytes.h) against the CPU's map.
// And the GPU tests' own inputs: randomElements() must hold the adversarial
// values it promises, or the bit-for-bit comparisons would prove less.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "codec_inputs.h"
#include "compress/token_selection.h"
#include "gpu_test_support.h"
#include "hash_test_inputs.h"
#include "kernels/cpu/reduce_ops.h"
#include "kernels/cpu/sparse/format_dispatch.h"
#include "kernels/cuda/bitmap_bytes.h"
#include "kernels/cuda/bucket_offsets.h"
#include "kernels/cuda/hash_insert.h"
#include "kernels/cuda/quantize_groups.h"
#include "kernels/cuda/scatter_runs.h"
#include "kernels/cuda/token_rank_key.h"
#include "kernels/kernels.h"
#include "kernels/sparse_kernels.h"
#include "sparse/bucketing_methods.h"
#include "sparse/encoding_codecs.h"
#include "token_inputs.h"

namespace spccl::gpu_test {
namespace {

using kernels::Codec;
using kernels::QuantizerSpec;
namespace cuda = kernels::cuda;

constexpr unsigned kLanes = 32;

// blockScalesKernel for one block: lane l adds elements begin + l, + 32, ...;
// then for offset 16, 8, 4, 2, 1 every lane merges lane (l ^ offset)'s state
// as it was before the step (__shfl_xor_sync exchanges simultaneously).
template <typename Format>
float warpBlockScale(const typename Format::Storage* in, const float* residual, size_t begin,
                     size_t end) {
  std::array<cuda::ScaleAccumulator, kLanes> lanes{};
  for (unsigned l = 0; l < kLanes; ++l)
    for (size_t i = begin + l; i < end; i += kLanes)
      lanes[l].add(kernels::encodedValue<Format>(in, residual, i));
  for (unsigned offset = kLanes / 2; offset > 0; offset /= 2) {
    const auto before = lanes;
    for (unsigned l = 0; l < kLanes; ++l)
      lanes[l].merge(before[l ^ offset].m, before[l ^ offset].nonFinite);
  }
  return lanes[0].scale();
}

// kernels/cuda/quantize_cuda.cu's quantize, its grids unrolled into loops:
// quantizeBlocksKernel when blocks hold a multiple of 8 elements, else
// blockScalesKernel then quantizeCodesKernel.
template <typename Format, typename Magnitude>
void quantizeLikeTheKernels(const Magnitude& magnitude, const QuantizerSpec& spec,
                            const void* input, size_t count, unsigned char* out, float* residual) {
  const auto* in = static_cast<const typename Format::Storage*>(input);
  const size_t blocks = kernels::quantizedBlockCount(spec, count);
  const cuda::LevelTable levels = cuda::levelTableOf(magnitude, spec.bits);
  unsigned char* packed = out + blocks * sizeof(float);
  if (spec.blockSize % cuda::kCodeGroup == 0) {  // quantizeBlocksKernel: block by block
    const size_t groups = cuda::codeGroups(count), groupsPerBlock = spec.blockSize / 8;
    for (size_t b = 0; b < blocks; ++b) {
      const float m = warpBlockScale<Format>(in, residual, b * spec.blockSize,
                                             std::min(count, (b + 1) * spec.blockSize));
      std::memcpy(out + b * sizeof(float), &m, sizeof(float));
      for (size_t g = b * groupsPerBlock; g < std::min(groups, (b + 1) * groupsPerBlock); ++g)
        cuda::quantizeGroup<Format>(magnitude, levels, spec.bits, spec.blockSize, in, residual,
                                    count, out, packed, g);
    }
    return;
  }
  for (size_t b = 0; b < blocks; ++b) {  // blockScalesKernel, then quantizeCodesKernel
    const float m = warpBlockScale<Format>(in, residual, b * spec.blockSize,
                                           std::min(count, (b + 1) * spec.blockSize));
    std::memcpy(out + b * sizeof(float), &m, sizeof(float));
  }
  for (size_t g = 0; g < cuda::codeGroups(count); ++g)
    cuda::quantizeGroup<Format>(magnitude, levels, spec.bits, spec.blockSize, in, residual, count,
                                out, packed, g);
}

template <typename Magnitude, typename Sink>
void decodeLikeTheKernels(const Magnitude& magnitude, const QuantizerSpec& spec,
                          const unsigned char* encoded, size_t count, const Sink& sink) {
  const cuda::LevelTable levels = cuda::levelTableOf(magnitude, spec.bits);
  const unsigned char* packed = encoded + kernels::quantizedBlockCount(spec, count) * sizeof(float);
  for (size_t g = 0; g < cuda::codeGroups(count); ++g)
    cuda::decodeGroup(levels, spec.bits, spec.blockSize, encoded, packed, count, g, sink);
}

template <typename Format>
void checkCodec(Codec codec, spcclDataType_t type) {
  const kernels::KernelTable& cpu = kernels::cpuKernels();
  const size_t bytes = typeBytes(type);
  std::mt19937_64 rng(static_cast<uint64_t>(codec) * 10 + type);
  for (int bits = kernels::kMinQuantizerBits; bits <= kernels::kMaxQuantizerBits; ++bits) {
    const int n = bits - 1;
    const kernels::PiecewiseMagnitude piecewise(n);
    const kernels::LinearMagnitude linear(n);
    for (const size_t blockSize :
         {size_t{1}, size_t{7}, size_t{8}, size_t{33}, size_t{256}, size_t{1000}}) {
      const QuantizerSpec spec{codec, bits, blockSize};
      for (const size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{8}, size_t{9}, size_t{255},
                                 size_t{257}, size_t{4097}, size_t{20001}}) {
        SCOPED_TRACE(testing::Message() << typeName(type) << " codec " << int(codec) << " bits "
                                        << bits << " block " << blockSize << " count " << count);
        const auto input = codecInput(type, count, blockSize, bits, rng);
        const size_t encodedBytes = kernels::quantizedBytes(spec, count);
        for (const bool feedback : {false, true}) {
          std::vector<float> residual = smallFloats(feedback ? count : 0, rng);
          std::vector<float> hostResidual = residual;
          std::vector<unsigned char> expected(encodedBytes), actual(encodedBytes, 0xee);
          cpu.quantize[type](spec, input.data(), count, expected.data(),
                             feedback ? residual.data() : nullptr);
          float* r = feedback ? hostResidual.data() : nullptr;
          if (codec == Codec::Linear)
            quantizeLikeTheKernels<Format>(linear, spec, input.data(), count, actual.data(), r);
          else
            quantizeLikeTheKernels<Format>(piecewise, spec, input.data(), count, actual.data(), r);
          ASSERT_EQ(firstDifference(expected, actual, 1), "") << "encoding";
          ASSERT_EQ(firstDifference(bytesOf(residual), bytesOf(hostResidual), 4), "") << "residual";
        }
        std::vector<unsigned char> encoded(encodedBytes);
        cpu.quantize[type](spec, input.data(), count, encoded.data(), nullptr);
        std::vector<unsigned char> expected(count * bytes), actual(count * bytes, 0xee);
        cpu.dequantize[type](spec, encoded.data(), count, expected.data());
        const cuda::StoreDecoded<Format> store{
            reinterpret_cast<typename Format::Storage*>(actual.data())};
        std::vector<float> expectedAcc = smallFloats(count, rng);
        std::vector<float> actualAcc = expectedAcc;
        cpu.dequantizeAdd(spec, encoded.data(), count, expectedAcc.data());
        const cuda::AddDecoded add{actualAcc.data()};
        if (codec == Codec::Linear) {
          decodeLikeTheKernels(linear, spec, encoded.data(), count, store);
          decodeLikeTheKernels(linear, spec, encoded.data(), count, add);
        } else {
          decodeLikeTheKernels(piecewise, spec, encoded.data(), count, store);
          decodeLikeTheKernels(piecewise, spec, encoded.data(), count, add);
        }
        ASSERT_EQ(firstDifference(expected, actual, bytes), "") << "dequantize";
        ASSERT_EQ(firstDifference(bytesOf(expectedAcc), bytesOf(actualAcc), 4), "")
            << "dequantizeAdd";
      }
    }
  }
}

TEST(CudaLogicOnHost, CodecGroupsMatchTheCpuCodec) {
  for (const Codec codec : {Codec::Piecewise, Codec::Linear}) {
    checkCodec<kernels::NativeFormat<float>>(codec, spcclFloat32);
    checkCodec<kernels::HalfFormat>(codec, spcclFloat16);
    checkCodec<kernels::Bfloat16Format>(codec, spcclBfloat16);
  }
}

struct HostHashResult {
  std::vector<uint64_t> ordinals;
  std::vector<size_t> offsets;
  uint64_t rehashed = 0, serialWrites = 0, serialGrowths = 0;
};

// hierarchicalHashBucketing (hierarchical_hash_cuda.cu) with its kernel run
// one entry at a time and its CUB extraction as the loops it stands for:
// occupied slots in slot order (DeviceSelect::Flagged), and per region
// their count (DeviceSegmentedReduce::Sum).
HostHashResult hashLikeTheKernel(const cuda::HierarchicalHashLayout& layout,
                                 const std::vector<uint64_t>& indices,
                                 const std::vector<int>& owners) {
  const size_t parts = static_cast<size_t>(layout.parts);
  std::vector<uint64_t> serialSlots = layout.serialSlots;
  HostHashResult result;
  for (;;) {
    const std::vector<uint64_t> tables = cuda::hashTablesFor(layout, serialSlots);
    const uint64_t total = tables[parts];
    std::vector<uint64_t> slots(total);
    std::vector<unsigned> occupied(total, 0);
    std::vector<unsigned long long> serialCounts(parts, 0);
    const cuda::HashMemory memory{slots.data(), occupied.data(), serialCounts.data()};
    cuda::InsertCounts counts;
    for (size_t ordinal = 0; ordinal < indices.size(); ++ordinal)
      cuda::insertEntry(cuda::hashTablesView(tables.data(), parts), memory, indices[ordinal],
                        owners[ordinal], ordinal, layout.secondLevelSeed, &counts);
    if (cuda::growSerialMemories(serialCounts, &serialSlots, &result.serialGrowths)) continue;
    result.offsets.assign(parts + 1, 0);
    for (size_t p = 0; p < parts; ++p) {
      for (uint64_t t = tables[p]; t < tables[p + 1]; ++t)
        if (occupied[t] != 0) result.ordinals.push_back(slots[t]);
      result.offsets[p + 1] = result.ordinals.size();
    }
    result.rehashed = counts.rehashed;
    result.serialWrites = counts.serialWrites;
    return result;
  }
}

void expectHashingLikeCpu(const sparse::IndexPartition& partition,
                          const cuda::HierarchicalHashLayout& layout,
                          const std::vector<uint64_t>& indices, const std::vector<int>& owners,
                          const sparse::HierarchicalHashOptions& cpuOptions) {
  const std::vector<uint32_t> values(indices.size(), 3);
  sparse::Buckets cpu;
  sparse::hierarchicalHashBucketing(partition, sizeof(uint32_t), indices.data(), values.data(),
                                    indices.size(), cpuOptions, &cpu);
  const HostHashResult host = hashLikeTheKernel(layout, indices, owners);
  ASSERT_EQ(host.offsets, cpu.offsets);
  ASSERT_EQ(host.ordinals.size(), indices.size());
  for (size_t k = 0; k < indices.size(); ++k)
    ASSERT_EQ(partition.position(indices[host.ordinals[k]]), cpu.positions[k]) << "slot " << k;
  EXPECT_EQ(host.rehashed, cpu.rehashed);
  EXPECT_EQ(host.serialWrites, cpu.serialWrites);
  EXPECT_EQ(host.serialGrowths, cpu.serialGrowths);
}

// Owners from the device's h0 (kernels/cuda/zen_hash.h), so the buckets
// also check it against the CPU's ZenHash partition.
TEST(CudaLogicOnHost, HashingDefaultSizingPlacesLikeTheCpu) {
  for (const int parts : {1, 4, 16}) {
    for (const size_t nnz : {size_t{1}, size_t{1000}, size_t{30000}}) {
      SCOPED_TRACE(testing::Message() << "parts " << parts << " nnz " << nnz);
      const uint64_t universe = 1 << 20, seed = 3 + parts;
      const auto partition =
          sparse::makePartition(sparse::PartitionKind::ZenHash, universe, parts, seed);
      const auto indices = distinctRandomIndices(universe, nnz, nnz + parts);
      std::vector<int> owners(nnz);
      for (size_t i = 0; i < nnz; ++i) owners[i] = cuda::zenOwner(indices[i], seed, parts);
      expectHashingLikeCpu(*partition, layoutFor(*partition, seed, nnz), indices, owners, {});
    }
  }
}

TEST(CudaLogicOnHost, HashingTinyTablesPlaceLikeTheCpu) {
  sparse::HierarchicalHashOptions cpuOptions;
  cpuOptions.fixedParallelSlots = 4;
  cpuOptions.fixedSerialSlots = 1;
  for (const auto kind : {sparse::PartitionKind::ZenHash, sparse::PartitionKind::Permutation,
                          sparse::PartitionKind::Contiguous}) {
    SCOPED_TRACE(testing::Message() << "kind " << int(kind));
    const auto partition = sparse::makePartition(kind, 100000, 8, 4);
    const auto indices = distinctRandomIndices(100000, 5000, 9);
    std::vector<int> owners(indices.size());
    for (size_t i = 0; i < indices.size(); ++i) owners[i] = partition->owner(indices[i]);
    expectHashingLikeCpu(*partition, layoutFor(*partition, 4, indices.size(), 4, 1), indices,
                         owners, cpuOptions);
  }
}

TEST(CudaLogicOnHost, HashingTotalCollisionLikeTheCpu) {
  sparse::HierarchicalHashOptions cpuOptions;
  cpuOptions.fixedParallelSlots = 8;
  cpuOptions.fixedSerialSlots = 1;
  // 3 entries: a serial count of exactly r2 + 1 (the growth's boundary).
  for (const size_t count : {size_t{2}, size_t{3}, size_t{49}}) {
    SCOPED_TRACE(testing::Message() << count << " entries");
    const auto indices = indicesCollidingEverywhere(count, cpuOptions.secondLevelSeed);
    const auto partition =
        sparse::makePartition(sparse::PartitionKind::Contiguous, indices.back() + 1, 1, 0);
    expectHashingLikeCpu(*partition, layoutFor(*partition, 0, count, 8, 1), indices,
                         std::vector<int>(count, 0), cpuOptions);
  }
}

// scatterWithRepeats (scatter_gather_cuda.cu) with CUB's stable radix sort
// as std::stable_sort and the runs kernel as a loop (backwards).
template <typename Format, typename Op>
void scatterLikeTheKernel(void* dense, const std::vector<uint64_t>& indices, const void* values) {
  const size_t nnz = indices.size();
  std::vector<uint64_t> order(nnz);
  std::iota(order.begin(), order.end(), uint64_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](uint64_t a, uint64_t b) { return indices[a] < indices[b]; });
  std::vector<uint64_t> sorted(nnz);
  for (size_t j = 0; j < nnz; ++j) sorted[j] = indices[order[j]];
  using Storage = typename Format::Storage;
  for (size_t j = nnz; j-- > 0;)
    cuda::foldRunAt<Format, Op>(j, static_cast<Storage*>(dense), sorted.data(), order.data(),
                                static_cast<const Storage*>(values), nnz);
}

template <typename Format>
void scatterWithOp(spcclRedOp_t op, void* dense, const std::vector<uint64_t>& indices,
                   const void* values) {
  switch (op) {
    case spcclProd:
      return scatterLikeTheKernel<Format, kernels::ProdOp>(dense, indices, values);
    case spcclMax:
      return scatterLikeTheKernel<Format, kernels::MaxOp>(dense, indices, values);
    case spcclMin:
      return scatterLikeTheKernel<Format, kernels::MinOp>(dense, indices, values);
    default:
      return scatterLikeTheKernel<Format, kernels::SumOp>(dense, indices, values);
  }
}

TEST(CudaLogicOnHost, ScatterRunsFoldLikeTheCpu) {
  std::mt19937_64 rng(8);
  for (const spcclDataType_t type : kAllTypes) {
    for (const spcclRedOp_t op : kAllOps) {
      for (const size_t count : {size_t{1}, size_t{5}, size_t{1000}}) {
        SCOPED_TRACE(testing::Message()
                     << typeName(type) << " " << opName(op) << " count " << count);
        const size_t nnz = 3 * count;  // many repeats
        std::vector<uint64_t> indices(nnz);
        for (auto& index : indices) index = rng() % count;
        const auto dense = randomElements(type, count, rng, 0.2);
        const auto values = randomElements(type, nnz, rng, 0.1);
        std::vector<unsigned char> expected = dense, actual = dense;
        kernels::scatterReduce(type, op, expected.data(), indices.data(), values.data(), nnz);
        kernels::withFormat(type, 0, [&](auto format) {
          scatterWithOp<decltype(format)>(op, actual.data(), indices, values.data());
          return 0;
        });
        ASSERT_EQ(firstDifference(expected, actual, typeBytes(type)), "");
      }
    }
  }
}

TEST(CudaLogicOnHost, BucketOffsetsFromSortedOwners) {
  std::mt19937_64 rng(12);
  for (const int parts : {1, 2, 7, 64}) {
    for (const size_t nnz : {size_t{0}, size_t{1}, size_t{10}, size_t{1000}}) {
      std::vector<unsigned> owners(nnz);
      // Only even owners: every odd partition is empty.
      for (auto& owner : owners) owner = static_cast<unsigned>(rng() % parts) / 2 * 2 % parts;
      std::sort(owners.begin(), owners.end());
      std::vector<uint64_t> expected(static_cast<size_t>(parts) + 1, 0);
      for (const unsigned owner : owners) ++expected[owner + 1];
      std::partial_sum(expected.begin(), expected.end(), expected.begin());
      std::vector<uint64_t> actual(expected.size(), ~uint64_t{0});
      for (size_t j = 0; j <= nnz; ++j)
        cuda::writeOffsetsAt(j, owners.data(), nnz, parts, actual.data());
      EXPECT_EQ(actual, expected) << "parts " << parts << " nnz " << nnz;
    }
  }
}

TEST(CudaLogicOnHost, TokenRankKeysChooseLikeTheCpu) {
  std::mt19937_64 rng(10);
  for (const size_t tokens : {size_t{1}, size_t{2}, size_t{17}, size_t{1000}}) {
    const auto scores = adversarialScores(tokens, rng);
    std::vector<size_t> order(tokens);
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return cuda::tokenRankKey(scores[a]) < cuda::tokenRankKey(scores[b]);
    });
    for (size_t keep = 0; keep <= tokens; keep += std::max<size_t>(1, tokens / 50)) {
      std::vector<unsigned char> expected(tokens), actual(tokens, 0);
      compress::selectTopTokens(scores.data(), tokens, keep, expected.data());
      for (size_t j = 0; j < keep; ++j) actual[order[j]] = 1;
      ASSERT_EQ(firstDifference(expected, actual, 1), "") << tokens << " tokens, keep " << keep;
    }
  }
}

TEST(CudaLogicOnHost, BitmapBytesLikeTheCpuMap) {
  for (const uint64_t universe : {uint64_t{1}, uint64_t{13}, uint64_t{1000}, uint64_t{4096}}) {
    for (const size_t nnz : {size_t{0}, size_t{1}, size_t{universe / 3}, size_t{universe}}) {
      auto positions = distinctRandomIndices(universe, nnz, universe + nnz);
      const size_t mapBytes = (universe + 7) / 8;
      std::vector<unsigned char> expected(mapBytes);
      sparse::encodeBitmap(positions.data(), nullptr, nnz, universe, 0, expected.data());
      std::sort(positions.begin(), positions.end());  // the kernel's input is sorted
      std::vector<unsigned char> actual(mapBytes, 0);
      for (size_t j = nnz; j-- > 0;)
        cuda::writeBitmapByteAt(j, positions.data(), nnz, actual.data());
      ASSERT_EQ(firstDifference(expected, actual, 1), "") << universe << " " << nnz;
    }
  }
}

// Which adversarial classes a buffer of `type` holds.
struct ValueClasses {
  bool positiveZero = false, negativeZero = false, infinity = false, quietNaN = false,
       signallingNaN = false, subnormal = false, integerMin = false, integerMax = false,
       minusOne = false;
};

ValueClasses classify(spcclDataType_t type, const std::vector<unsigned char>& bytes) {
  ValueClasses found;
  const size_t size = typeBytes(type);
  for (size_t i = 0; i + size <= bytes.size(); i += size) {
    uint64_t bits = 0;
    std::memcpy(&bits, bytes.data() + i, size);
    const bool isSigned = type == spcclInt8 || type == spcclInt32 || type == spcclInt64;
    if (type == spcclFloat16 || type == spcclBfloat16 || type == spcclFloat32 ||
        type == spcclFloat64) {
      int exponentBits = 8, mantissaBits = 23;
      if (type == spcclFloat16) exponentBits = 5, mantissaBits = 10;
      if (type == spcclBfloat16) exponentBits = 8, mantissaBits = 7;
      if (type == spcclFloat64) exponentBits = 11, mantissaBits = 52;
      const uint64_t mantissa = bits & ((uint64_t{1} << mantissaBits) - 1);
      const uint64_t exponent = (bits >> mantissaBits) & ((uint64_t{1} << exponentBits) - 1);
      const bool sign = (bits >> (mantissaBits + exponentBits)) & 1;
      const uint64_t allOnes = (uint64_t{1} << exponentBits) - 1;
      const bool quiet = (mantissa >> (mantissaBits - 1)) & 1;
      found.positiveZero |= exponent == 0 && mantissa == 0 && !sign;
      found.negativeZero |= exponent == 0 && mantissa == 0 && sign;
      found.subnormal |= exponent == 0 && mantissa != 0;
      found.infinity |= exponent == allOnes && mantissa == 0;
      found.quietNaN |= exponent == allOnes && mantissa != 0 && quiet;
      found.signallingNaN |= exponent == allOnes && mantissa != 0 && !quiet;
    } else {
      const uint64_t all = size == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * size)) - 1;
      const uint64_t top = uint64_t{1} << (8 * size - 1);
      found.positiveZero |= bits == 0;
      found.minusOne |= bits == all;
      found.integerMin |= isSigned ? bits == top : bits == 0;
      found.integerMax |= isSigned ? bits == top - 1 : bits == all;
    }
  }
  return found;
}

TEST(CudaLogicOnHost, GpuTestInputsHoldTheAdversarialValues) {
  std::mt19937_64 rng(1);
  for (const spcclDataType_t type : kAllTypes) {
    SCOPED_TRACE(typeName(type));
    const ValueClasses found = classify(type, randomElements(type, 20000, rng, 0.05));
    EXPECT_TRUE(found.positiveZero);
    if (type == spcclFloat16 || type == spcclBfloat16 || type == spcclFloat32 ||
        type == spcclFloat64) {
      EXPECT_TRUE(found.negativeZero);
      EXPECT_TRUE(found.infinity);
      EXPECT_TRUE(found.quietNaN);
      EXPECT_TRUE(found.signallingNaN);
      EXPECT_TRUE(found.subnormal);
    } else {
      EXPECT_TRUE(found.minusOne);
      EXPECT_TRUE(found.integerMin);
      EXPECT_TRUE(found.integerMax);
    }
  }
}

}  // namespace
}  // namespace spccl::gpu_test
