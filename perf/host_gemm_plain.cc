// hostSgemm as plain loops, for builds without OpenBLAS: correct, not fast
// (migrate_perf refuses --compute gemm there; see host_gemm.h).
#include <algorithm>

#include "host_gemm.h"

namespace spccl::perf {

void hostSgemm(bool transA, bool transB, int m, int n, int k, const float* a, int lda,
               const float* b, int ldb, float* c, int ldc) {
  auto aAt = [&](int i, int p) { return transA ? a[p * lda + i] : a[i * lda + p]; };
  for (int i = 0; i < m; ++i) {
    float* row = c + static_cast<long>(i) * ldc;
    if (transB) {
      // op(B)(p, j) = b[j][p]: a dot product along B's contiguous rows.
      for (int j = 0; j < n; ++j) {
        const float* bRow = b + static_cast<long>(j) * ldb;
        float sum = 0.0f;
        for (int p = 0; p < k; ++p) sum += aAt(i, p) * bRow[p];
        row[j] = sum;
      }
    } else {
      // Row i of C accumulates a(i, p) times row p of B (contiguous).
      std::fill(row, row + n, 0.0f);
      for (int p = 0; p < k; ++p) {
        const float scale = aAt(i, p);
        const float* bRow = b + static_cast<long>(p) * ldb;
        for (int j = 0; j < n; ++j) row[j] += scale * bRow[j];
      }
    }
  }
}

bool hostGemmIsOpenBlas() { return false; }

void hostGemmUseOneThread() {}

}  // namespace spccl::perf
