// What every source file of spccl_gpu_collective_tests shares: this rank's
// communicator and stream (World), the self-check switch, the GpuCollectives
// fixture, and the checks that compare a result with the CPU reference
// (tests/common/coll_reference.h) bit for bit.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "memory_kinds.h"
#include "spccl.h"

namespace spccl::gpu_coll_test {

using gpu_test::MemoryKind;

struct World {
  std::string whyNoGpu;  // empty: a device can be used
  spcclComm_t comm = nullptr;
  int rank = 0;
  int nranks = 1;
  cudaStream_t stream = nullptr;  // non-blocking, created by this program
};

World& world();

// SPCCL_GPU_COLL_HOST_SELF_CHECK=1: "device" buffers are plain host memory
// and only the NULL stream is used, with or without a GPU, so that this
// program's references and bookkeeping can be checked against the CPU
// library (CI machines included); the tests that need device memory or a
// stream skip.
bool selfCheck();
MemoryKind deviceKind();
// SPCCL_GPU_COLL_SMALL=1: every size small (compute-sanitizer).
bool smallRun();

class GpuCollectives : public ::testing::Test {
 protected:
  void SetUp() override;
  spcclComm_t comm() const { return world().comm; }
  int rank() const { return world().rank; }
  int nranks() const { return world().nranks; }
  // Both stream forms: the created stream and NULL (only NULL in the
  // self-check).
  std::vector<cudaStream_t> streams() const;
  // The created stream (NULL in the self-check).
  cudaStream_t stream() const;
};

const char* streamName(cudaStream_t stream);

// A host buffer of count elements (at least one) holding 0x5a, the pattern
// KindBuffer starts with.
std::vector<char> hostBuffer(spcclDataType_t type, size_t count);

// "rank R: Collective(type, op, count, in place, stream, memory kind)".
std::string describe(const char* collective, spcclDataType_t type, spcclRedOp_t op, size_t count,
                     bool inPlace, cudaStream_t stream, MemoryKind kind = deviceKind());

void expectSuccess(spcclResult_t result, const std::string& what);

// count elements of `actual` (from byte offset `offset`) equal expected bit
// for bit; the first difference is reported.
void expectElements(const std::vector<char>& expected, const std::vector<unsigned char>& actual,
                    spcclDataType_t type, size_t count, const std::string& what, size_t offset = 0);

// Every rank's hash of `bytes` equals rank 0's (an all-gather on the host).
void expectSameOnEveryRank(const void* bytes, size_t size, const std::string& what);

inline constexpr spcclDataType_t kFloatTypes[] = {spcclFloat32, spcclFloat16, spcclBfloat16};

}  // namespace spccl::gpu_coll_test
