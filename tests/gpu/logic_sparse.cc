// The per-thread work of the CUDA sparse kernels on the CPU
// (test_cuda_logic_on_host, README.md): scatterReduce's run folding
// (kernels/cuda/scatter_runs.h), in reverse order to show the runs are
// independent, against the CPU's scatterReduce bit for bit; two-pass
// bucket boundaries (bucket_offsets.h); bitmap bytes (bitmap_bytes.h)
// against the CPU's map; the top-k token order key (token_rank_key.h),
// whose stable sort, as CUB's, must choose the CPU's tokens.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "compress/token_selection.h"
#include "gpu_test_support.h"
#include "hash_test_inputs.h"
#include "kernels/cpu/reduce_ops.h"
#include "kernels/cpu/sparse/format_dispatch.h"
#include "kernels/cuda/bitmap_bytes.h"
#include "kernels/cuda/bucket_offsets.h"
#include "kernels/cuda/scatter_runs.h"
#include "kernels/cuda/token_rank_key.h"
#include "kernels/sparse_kernels.h"
#include "sparse/encoding_codecs.h"
#include "token_inputs.h"

namespace spccl::gpu_test {
namespace {

namespace cuda = kernels::cuda;

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
                     << spcclTypeName(type) << " " << spcclOpName(op) << " count " << count);
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
        ASSERT_EQ(firstDifference(expected, actual, spcclTypeSize(type)), "");
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
      const unsigned char noValues = 0;  // values of 0 bytes (memcpy wants a pointer)
      sparse::encodeBitmap(positions.data(), &noValues, nnz, universe, 0, expected.data());
      std::sort(positions.begin(), positions.end());  // the kernel's input is sorted
      std::vector<unsigned char> actual(mapBytes, 0);
      for (size_t j = nnz; j-- > 0;)
        cuda::writeBitmapByteAt(j, positions.data(), nnz, actual.data());
      ASSERT_EQ(firstDifference(expected, actual, 1), "") << universe << " " << nnz;
    }
  }
}

}  // namespace
}  // namespace spccl::gpu_test
