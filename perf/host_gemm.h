// The host GEMM of perf/migrate_perf: OpenBLAS's cblas_sgemm where the
// build found OpenBLAS (host_gemm_openblas.cc), plain loops otherwise
// (host_gemm_plain.cc; the lent GPU image has no OpenBLAS). The plain loops
// only serve --compute sleep's checked iterations, never timed compute.
#pragma once

namespace spccl::perf {

// C = op(A) * op(B), row-major, C m x n, inner dimension k; op transposes
// when asked. Overwrites C (beta = 0).
void hostSgemm(bool transA, bool transB, int m, int n, int k, const float* a, int lda,
               const float* b, int ldb, float* c, int ldc);

// True when hostSgemm is OpenBLAS's, fast enough to time (--compute gemm).
bool hostGemmIsOpenBlas();

// One core per rank: the ranks share the machine.
void hostGemmUseOneThread();

}  // namespace spccl::perf
