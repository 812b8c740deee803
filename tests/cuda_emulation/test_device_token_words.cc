// The row kernels' word widths (kernels/device_rows/move_rows.h): rows
// move in 16-byte words where the row width and both buffers' addresses
// allow, else in 4-byte words, else byte by byte. Token all-reduces of
// device tensors whose row widths and addresses take each width, with and
// without a device residual (error feedback), compared bit for bit with
// the staged path (SPCCL_DEVICE_TOKENS=0). The emulated driver's stand-in
// refuses a launch whose words would be misaligned, as a GPU would fault,
// and counts the launches by word width: each case checks that the
// buffers it passes take the width it is for, and that every launch was
// given that width (a launch that ignored it would still be bit-exact).
// Emulated driver only (real forked ranks, host stand-ins of the
// kernels): NOT the CUDA kernels.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <ostream>
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
  size_t offset;                   // bytes between the allocation and the tensor (or residual)
  bool residual;                   // with a device cfg->residual at the same offset
  uint64_t wordBytes;              // the tensor's launches'
  uint64_t residualWordBytes = 0;  // the residual's launches' (with a residual)

  std::string describe(int rank) const {
    return "type " + std::to_string(type) + " hidden " + std::to_string(hidden) + " offset " +
           std::to_string(offset) + (residual ? " with a residual" : "") + " rank " +
           std::to_string(rank);
  }
};

// The row kernels' launches by word width (the emulator's counters).
struct WordLaunches {
  uint64_t of16 = 0, of4 = 0, ofBytes = 0;
  bool operator==(const WordLaunches&) const = default;
};

std::ostream& operator<<(std::ostream& out, const WordLaunches& w) {
  return out << w.of16 << " of 16-byte words, " << w.of4 << " of 4-byte words, " << w.ofBytes
             << " of bytes";
}

// `count` more launches of `wordBytes`-byte words.
WordLaunches& add(WordLaunches& w, uint64_t wordBytes, uint64_t count) {
  (wordBytes == 16 ? w.of16 : wordBytes == 4 ? w.of4 : w.ofBytes) += count;
  return w;
}

WordLaunches wordLaunchesSince(const EmuCudaCounters& before) {
  const EmuCudaCounters now = emuCudaCounters();
  return {now.rowLaunchesOf16ByteWords - before.rowLaunchesOf16ByteWords,
          now.rowLaunchesOf4ByteWords - before.rowLaunchesOf4ByteWords,
          now.rowLaunchesOfBytes - before.rowLaunchesOfBytes};
}

struct Result {
  std::vector<unsigned char> buff, residual;
  uint64_t launches = 0;
  WordLaunches words;
  // The widths the buffers passed take (the packed rows' scratch is a
  // fresh allocation, aligned): what the case is meant to exercise.
  uint64_t tensorWordBytes = 0, residualWordBytes = 0;
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
  Result result;
  result.tensorWordBytes = dr::wordBytesFor(reinterpret_cast<uint64_t>(buff.data()), 0,
                                            c.hidden * spcclTypeSize(c.type));
  result.residualWordBytes =
      dr::wordBytesFor(reinterpret_cast<uint64_t>(residual.data()), 0, c.hidden * sizeof(float));
  const EmuCudaCounters before = emuCudaCounters();
  for (int call = 0; call < 2; ++call) {
    const std::vector<float> scores = scoresOf(rank + 8 * call);
    EXPECT_EQ(spcclTokenTopkAllReduce(buff.data(), scores.data(), kTokens, c.hidden, c.type,
                                      spcclSum, kTokens / 3, c.residual ? &cfg : nullptr,
                                      spcclPruneZero, nullptr, comm, nullptr),
              spcclSuccess)
        << c.describe(rank) << ": " << spcclGetLastError(comm);
  }
  result.launches = emuCudaCounters().kernelLaunches - before.kernelLaunches;
  result.words = wordLaunchesSince(before);
  result.buff = buff.get();
  result.residual = residual.get();
  unsetenv("SPCCL_DEVICE_TOKENS");
  return result;
}

void compareWithStaged(int n, const WordCase& c) {
  runOnRanks(n, [&c](int rank, spcclComm_t comm) {
    const std::string what = c.describe(rank);
    const Result staged = topkCalls(comm, rank, false, c);
    const Result device = topkCalls(comm, rank, true, c);
    EXPECT_EQ(device.tensorWordBytes, c.wordBytes) << what << ": not the tensor this case is for";
    if (c.residual) {
      EXPECT_EQ(device.residualWordBytes, c.residualWordBytes)
          << what << ": not the residual this case is for";
    }
    EXPECT_EQ(staged.launches, 0u) << what;
    EXPECT_EQ(device.launches, c.residual ? 10u : 6u) << what << ": not the device path";
    // Per call: the tensor's gather, scatter and zeroing; the residual's
    // gather and scatter.
    WordLaunches expected;
    add(expected, c.wordBytes, 6);
    if (c.residual) add(expected, c.residualWordBytes, 4);
    EXPECT_EQ(device.words, expected) << what << ": launched with other word widths";
    EXPECT_TRUE(device.buff == staged.buff) << what << ": the tensors differ";
    EXPECT_TRUE(device.residual == staged.residual) << what << ": the residuals differ";
    return kChildOk;
  });
}

TEST(DeviceTokenWords, SixteenByteWords) {
  compareWithStaged(2, {spcclFloat32, 40, 0, false, 16});
  compareWithStaged(3, {spcclBfloat16, 40, 0, true, 16, 16});
  compareWithStaged(2, {spcclBfloat16, 8, 0, false, 16});  // one word a row
}

TEST(DeviceTokenWords, FourByteWordsForNarrowRowsOrAddresses) {
  compareWithStaged(2, {spcclFloat32, 3, 0, false, 4});    // 12-byte rows
  compareWithStaged(3, {spcclBfloat16, 6, 0, false, 4});   // 12-byte rows
  compareWithStaged(2, {spcclFloat32, 40, 4, false, 4});   // tensor 4 past 16
  compareWithStaged(3, {spcclFloat32, 3, 4, true, 4, 4});  // residual too
}

TEST(DeviceTokenWords, BytesOtherwise) {
  compareWithStaged(2, {spcclBfloat16, 33, 0, false, 1});   // 66-byte rows
  compareWithStaged(3, {spcclBfloat16, 3, 0, true, 1, 4});  // 6-byte rows, 12-byte residual rows
  compareWithStaged(2, {spcclBfloat16, 40, 2, false, 1});   // tensor 2 past 16
}

}  // namespace
