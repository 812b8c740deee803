// The row kernels' word widths (kernels/device_rows/move_rows.h): rows
// move in 16-byte words where the row width and both buffers' addresses
// allow, else in 4-byte words, else byte by byte. Token all-reduces of
// device tensors whose row widths and addresses take each width, with and
// without a device residual (error feedback), compared bit for bit with
// the staged path (SPCCL_DEVICE_TOKENS=0). The emulated driver's stand-in
// refuses a launch whose words would be misaligned, as a GPU would fault.
// Emulated driver only (real forked ranks, host stand-ins of the
// kernels): NOT the CUDA kernels.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "device_token_inputs.h"
#include "emulated_ranks.h"
#include "kernels/device_rows/move_rows.h"
#include "spccl.h"

using namespace spccl::testing;
namespace dr = spccl::kernels::device_rows;

namespace {

struct WordCase {
  spcclDataType_t type;
  size_t hidden;
  size_t offset;  // bytes between the allocation and the tensor (or residual)
  bool residual;  // with a device cfg->residual at the same offset
  uint64_t wordBytes;

  std::string describe(int rank) const {
    return "type " + std::to_string(type) + " hidden " + std::to_string(hidden) + " offset " +
           std::to_string(offset) + (residual ? " with a residual" : "") + " rank " +
           std::to_string(rank);
  }
};

struct Result {
  std::vector<unsigned char> buff, residual;
  uint64_t launches = 0;
};

// Device memory of `bytes` at `offset` past an allocation, set to `values`.
class OffsetBuffer {
 public:
  OffsetBuffer(const std::vector<unsigned char>& values, size_t offset)
      : offset_(offset), buffer_(values.size() + offset, EmuCudaDevice) {
    std::vector<unsigned char> all(offset, 0xa5);
    all.insert(all.end(), values.begin(), values.end());
    buffer_.set(all.data());
  }
  void* data() const { return static_cast<unsigned char*>(buffer_.data()) + offset_; }
  std::vector<unsigned char> get() const { return buffer_.get(nullptr); }  // the prefix too

 private:
  size_t offset_;
  Buffer buffer_;
};

// Two top-k calls (prune zero: the zeroing kernel too) sharing one
// residual, SPCCL_DEVICE_TOKENS as given.
Result topkCalls(spcclComm_t comm, int rank, bool deviceTokens, const WordCase& c) {
  setenv("SPCCL_DEVICE_TOKENS", deviceTokens ? "1" : "0", 1);
  const OffsetBuffer buff(tensorOf(rank, c.type, c.hidden), c.offset);
  const OffsetBuffer residual(std::vector<unsigned char>(kTokens * c.hidden * sizeof(float), 0),
                              c.offset);
  spcclCompression cfg = SPCCL_COMPRESSION_INITIALIZER;
  cfg.residual = static_cast<float*>(residual.data());
  const EmuCudaCounters before = emuCudaCounters();
  for (int call = 0; call < 2; ++call) {
    const std::vector<float> scores = scoresOf(rank + 8 * call);
    EXPECT_EQ(spcclTokenTopkAllReduce(buff.data(), scores.data(), kTokens, c.hidden, c.type,
                                      spcclSum, kTokens / 3, c.residual ? &cfg : nullptr,
                                      spcclPruneZero, nullptr, comm, nullptr),
              spcclSuccess)
        << c.describe(rank) << ": " << spcclGetLastError(comm);
  }
  Result result;
  result.launches = emuCudaCounters().kernelLaunches - before.kernelLaunches;
  result.buff = buff.get();
  result.residual = residual.get();
  unsetenv("SPCCL_DEVICE_TOKENS");
  return result;
}

void compareWithStaged(int n, const WordCase& c) {
  runOnRanks(n, [&c](int rank, spcclComm_t comm) {
    const std::string what = c.describe(rank);
    // The scratch of the packed rows is a fresh allocation (aligned): the
    // tensor's address and row width decide.
    EXPECT_EQ(dr::wordBytesFor(reinterpret_cast<uint64_t>(OffsetBuffer({0}, c.offset).data()), 0,
                               c.hidden * spcclTypeSize(c.type)),
              c.wordBytes)
        << what << ": not the word width this case is for";
    const Result staged = topkCalls(comm, rank, false, c);
    const Result device = topkCalls(comm, rank, true, c);
    EXPECT_EQ(staged.launches, 0u) << what;
    EXPECT_EQ(device.launches, c.residual ? 10u : 6u) << what << ": not the device path";
    EXPECT_TRUE(device.buff == staged.buff) << what << ": the tensors differ";
    EXPECT_TRUE(device.residual == staged.residual) << what << ": the residuals differ";
    return kChildOk;
  });
}

TEST(DeviceTokenWords, SixteenByteWords) {
  compareWithStaged(2, {spcclFloat32, 40, 0, false, 16});
  compareWithStaged(3, {spcclBfloat16, 40, 0, true, 16});
  compareWithStaged(2, {spcclBfloat16, 8, 0, false, 16});  // one word a row
}

TEST(DeviceTokenWords, FourByteWordsForNarrowRowsOrAddresses) {
  compareWithStaged(2, {spcclFloat32, 3, 0, false, 4});   // 12-byte rows
  compareWithStaged(3, {spcclBfloat16, 6, 0, false, 4});  // 12-byte rows
  compareWithStaged(2, {spcclFloat32, 40, 4, false, 4});  // tensor 4 past 16
  compareWithStaged(3, {spcclFloat32, 3, 4, true, 4});    // residual too
}

TEST(DeviceTokenWords, BytesOtherwise) {
  compareWithStaged(2, {spcclBfloat16, 33, 0, false, 1});  // 66-byte rows
  compareWithStaged(3, {spcclBfloat16, 3, 0, true, 1});    // 6-byte rows, 12-byte residual rows
  compareWithStaged(2, {spcclBfloat16, 40, 2, false, 1});  // tensor 2 past 16
}

}  // namespace
