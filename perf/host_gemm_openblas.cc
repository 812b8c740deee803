// hostSgemm through OpenBLAS (built only where CMake found it).
#include <cblas.h>

#include "host_gemm.h"

namespace spccl::perf {

void hostSgemm(bool transA, bool transB, int m, int n, int k, const float* a, int lda,
               const float* b, int ldb, float* c, int ldc) {
  cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans, transB ? CblasTrans : CblasNoTrans,
              m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc);
}

bool hostGemmIsOpenBlas() { return true; }

void hostGemmUseOneThread() { openblas_set_num_threads(1); }

}  // namespace spccl::perf
