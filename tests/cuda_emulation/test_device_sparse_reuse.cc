// The sparse all-reduce of device buffers (core/device_sparse_call.h)
// keeps the host memory where its input's 32-bit indices are widened in
// the communicator's sparse workspace: a call of the size of an earlier
// one allocates none for them. Counted by this binary's own operator new
// (it replaces the global one for libspccl too), which counts the
// allocations of one watched size; against the emulated driver (real
// ranks, host stand-ins of the kernels: not a GPU).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <vector>

#include "emulated_ranks.h"
#include "spccl.h"

namespace {

std::atomic<size_t> watchedBytes{0};
std::atomic<uint64_t> watchedAllocations{0};

}  // namespace

void* operator new(size_t bytes) {
  if (bytes != 0 && bytes == watchedBytes.load(std::memory_order_relaxed))
    watchedAllocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(bytes != 0 ? bytes : 1)) return p;
  throw std::bad_alloc();
}
// The replacements free what the replacement above took from malloc. GCC
// (at -O1, the sanitized suite's level) takes the free for a mismatch with
// operator new, not seeing that this is that operator's own delete.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t /*bytes*/) noexcept { std::free(p); }
#pragma GCC diagnostic pop

using namespace spccl::testing;

namespace {

constexpr size_t kCount = size_t{1} << 20;  // 32-bit indices

// About 1 % of the elements set, different ones on each rank (so that
// neither the union nor the other rank has this rank's non-zero count),
// to small integers whose sums are exact in any order.
std::vector<float> sparseInput(int rank) {
  std::vector<float> v(kCount, 0.0f);
  for (size_t i = 0; i < kCount; ++i)
    if ((i * 2654435761u + static_cast<size_t>(rank) * 977) % 101 == static_cast<size_t>(rank))
      v[i] = static_cast<float>(1 + (i % 7) + rank);
  return v;
}

size_t nonZeros(const std::vector<float>& v) {
  size_t n = 0;
  for (float x : v) n += x != 0.0f ? 1 : 0;
  return n;
}

// Two ranks, three calls of the same input on the device path (the
// block algorithm): only the
// first allocates nnz x 8 bytes (the widened indices: watched), the later
// ones reuse them; every output is the exact sum. Keeping them per call
// (the plan's vector) makes every call allocate them and fails it.
TEST(DeviceSparseReuse, WidenedIndicesAllocatedOnceN2) {
  runOnRanks(2, [](int rank, spcclComm_t comm) {
    setenv("SPCCL_DEVICE_SPARSE", "1", 1);
    const std::vector<float> input = sparseInput(rank), other = sparseInput(1 - rank);
    DeviceFloats send(kCount, nullptr, input), recv(kCount, nullptr);
    cuStreamSynchronize(nullptr);
    spcclSparseOptions_t options = SPCCL_SPARSE_OPTIONS_INITIALIZER;
    options.tag = 7;
    // The block algorithm allocates nothing of nnz x 8 bytes itself; the
    // others' own per-call sets and sketches can be of that size too.
    options.algorithm = spcclSparseBlock;
    watchedBytes = nonZeros(input) * sizeof(uint64_t);
    for (int call = 0; call < 3; ++call) {
      const uint64_t before = watchedAllocations.load();
      EXPECT_EQ(spcclSparseAllReduceWithOptions(send.data, recv.data, kCount, spcclFloat32,
                                                spcclSum, &options, comm, nullptr),
                spcclSuccess)
          << spcclGetLastError(comm);
      const uint64_t allocated = watchedAllocations.load() - before;
      if (call == 0)
        EXPECT_GE(allocated, 1u) << "rank " << rank << ": the widened indices not seen";
      else
        EXPECT_EQ(allocated, 0u) << "rank " << rank << " call " << call
                                 << ": the widened indices allocated again";
      const std::vector<float> out = recv.download(nullptr);
      size_t wrong = 0;
      for (size_t i = 0; i < kCount; ++i) wrong += out[i] != input[i] + other[i] ? 1 : 0;
      EXPECT_EQ(wrong, 0u) << "rank " << rank << " call " << call;
    }
    watchedBytes = 0;
    unsetenv("SPCCL_DEVICE_SPARSE");
    return kChildOk;
  });
}

}  // namespace
