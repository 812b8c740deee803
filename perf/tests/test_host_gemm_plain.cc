// The plain-loop GEMM that migrate_perf uses without OpenBLAS
// (host_gemm_plain.cc): every transpose, leading dimensions wider than the
// rows, C overwritten (beta = 0) and its padding left alone.
#include <gtest/gtest.h>

#include <vector>

#include "host_gemm.h"

namespace spccl::perf {
namespace {

constexpr float kPad = -99.0f;  // padding columns; never read into C, never written

// Rows of `rows` copied into a matrix whose leading dimension is one wider.
std::vector<float> padded(const std::vector<std::vector<float>>& rows) {
  std::vector<float> out;
  for (const auto& row : rows) {
    out.insert(out.end(), row.begin(), row.end());
    out.push_back(kPad);
  }
  return out;
}

// A = [[1,2,3],[4,5,6]], B = [[7,8],[9,10],[11,12]]: A * B = [[58,64],[139,154]],
// with each operand stored as itself or as its transpose.
void expectProduct(bool transA, bool transB) {
  const std::vector<float> a =
      transA ? padded({{1, 4}, {2, 5}, {3, 6}}) : padded({{1, 2, 3}, {4, 5, 6}});
  const std::vector<float> b =
      transB ? padded({{7, 9, 11}, {8, 10, 12}}) : padded({{7, 8}, {9, 10}, {11, 12}});
  const int lda = transA ? 3 : 4, ldb = transB ? 4 : 3, ldc = 3;
  std::vector<float> c = {5, 5, kPad, 5, 5, kPad};  // stale values: beta = 0 overwrites
  hostSgemm(transA, transB, 2, 2, 3, a.data(), lda, b.data(), ldb, c.data(), ldc);
  EXPECT_EQ(c, (std::vector<float>{58, 64, kPad, 139, 154, kPad}))
      << "transA=" << transA << " transB=" << transB;
}

TEST(HostGemmPlain, EveryTransposeGivesTheProduct) {
  for (bool transA : {false, true})
    for (bool transB : {false, true}) expectProduct(transA, transB);
}

TEST(HostGemmPlain, SaysItIsNotOpenBlas) { EXPECT_FALSE(hostGemmIsOpenBlas()); }

}  // namespace
}  // namespace spccl::perf
