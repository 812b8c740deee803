#include "gpu_collectives_world.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "../common/coll_reference.h"

namespace spccl::gpu_coll_test {

using namespace spccl::coll_reference;

World& world() {
  static World w;
  return w;
}

bool selfCheck() {
  const char* env = std::getenv("SPCCL_GPU_COLL_HOST_SELF_CHECK");
  return env != nullptr && std::strcmp(env, "0") != 0;
}

MemoryKind deviceKind() { return selfCheck() ? MemoryKind::Host : MemoryKind::Device; }

bool smallRun() {
  const char* env = std::getenv("SPCCL_GPU_COLL_SMALL");
  return env != nullptr && std::strcmp(env, "0") != 0;
}

void GpuCollectives::SetUp() {
  if (!world().whyNoGpu.empty() && !selfCheck())
    GTEST_SKIP() << "no usable CUDA device: " << world().whyNoGpu;
  ASSERT_NE(world().comm, nullptr);
}

std::vector<cudaStream_t> GpuCollectives::streams() const {
  if (selfCheck()) return {nullptr};
  return {world().stream, nullptr};
}

cudaStream_t GpuCollectives::stream() const { return selfCheck() ? nullptr : world().stream; }

const char* streamName(cudaStream_t stream) { return stream != nullptr ? "stream" : "NULL stream"; }

std::vector<char> hostBuffer(spcclDataType_t type, size_t count) {
  return std::vector<char>((count == 0 ? 1 : count) * spcclTypeSize(type), '\x5a');
}

std::string describe(const char* collective, spcclDataType_t type, spcclRedOp_t op, size_t count,
                     bool inPlace, cudaStream_t stream, MemoryKind kind) {
  char text[200];
  std::snprintf(text, sizeof(text), "rank %d: %s(%s, %s, count %zu, %s, %s, %s)", world().rank,
                collective, spcclTypeName(type), spcclOpName(op), count,
                inPlace ? "in place" : "out of place", streamName(stream),
                gpu_test::memoryKindName(kind));
  return text;
}

void expectSuccess(spcclResult_t result, const std::string& what) {
  EXPECT_EQ(result, spcclSuccess) << what << ": " << spcclGetErrorString(result) << ": "
                                  << spcclGetLastError(world().comm);
}

void expectElements(const std::vector<char>& expected, const std::vector<unsigned char>& actual,
                    spcclDataType_t type, size_t count, const std::string& what, size_t offset) {
  const size_t es = spcclTypeSize(type);
  ASSERT_GE(actual.size(), offset + count * es) << what;
  for (size_t i = 0; i < count; ++i) {
    if (std::memcmp(actual.data() + offset + i * es, expected.data() + i * es, es) == 0) continue;
    ADD_FAILURE() << what << ": element " << i << " is " << load(type, actual.data() + offset, i)
                  << ", expected " << load(type, expected.data(), i);
    return;
  }
}

void expectSameOnEveryRank(const void* bytes, size_t size, const std::string& what) {
  uint64_t mine = fnv1a(bytes, size);
  std::vector<uint64_t> all(static_cast<size_t>(world().nranks));
  expectSuccess(spcclAllGather(&mine, all.data(), 1, spcclUint64, world().comm, nullptr),
                what + " (hash all-gather)");
  for (int r = 0; r < world().nranks; ++r)
    EXPECT_EQ(all[r], all[0]) << what << ": rank " << r << "'s result differs from rank 0's";
}

}  // namespace spccl::gpu_coll_test
