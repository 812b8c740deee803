#include <algorithm>
#include <vector>

#include "base/check.h"
#include "coll/schedule_support.h"
#include "compress/compressed_schedules.h"
#include "compress/schedule_parts.h"

namespace spccl::compress {
namespace {

// The ring's steps on the CPU (schedule_parts.h), on memory it reaches:
// done at once, so complete and finish have nothing to wait for. The
// running sum is acc (a chunk's f32).
class HostRingSteps final : public RingSteps {
 public:
  HostRingSteps(const CollContext& ctx, const CompressedCall& call, float* acc)
      : ctx_(ctx), call_(call), acc_(acc) {}

  spcclResult_t encode(size_t begin, size_t length, unsigned char* out) override {
    encodeInput(ctx_, call_, begin, length, out);
    return spcclSuccess;
  }
  spcclResult_t accumulate(size_t begin, size_t length, const unsigned char* codes) override {
    if (codes != nullptr)
      sumInputAndDecoding(ctx_, call_, begin, length, codes, acc_);
    else
      loadInputChunk(ctx_, call_, begin, length, acc_);
    return spcclSuccess;
  }
  spcclResult_t encodeAccumulated(size_t begin, size_t length, unsigned char* out) override {
    encodePartialSum(ctx_, call_, begin, length, acc_, out);
    return spcclSuccess;
  }
  spcclResult_t finishAccumulated(size_t begin, size_t length, int divisor,
                                  unsigned char* out) override {
    finishOwnedSum(ctx_, call_, begin, length, divisor, acc_, out);
    return spcclSuccess;
  }
  spcclResult_t decode(size_t begin, size_t length, const unsigned char* codes) override {
    decodeIntoOutput(ctx_, call_, begin, length, codes);
    return spcclSuccess;
  }
  spcclResult_t complete() override { return spcclSuccess; }
  spcclResult_t finish() override { return spcclSuccess; }

 private:
  const CollContext& ctx_;
  const CompressedCall& call_;
  float* acc_;
};

}  // namespace

// Rank r sends chunk (r - s) at reduce-scatter step s and ends owning
// chunk r + 1, whose codes it sends first in the all-gather (the dense
// ring's order, ring_schedules.cc). The codec work goes through
// call.ring where the buffers are device memory, else HostRingSteps.
spcclResult_t ringCompressedAllReduce(CollContext& ctx, const CompressedCall& call) {
  const int n = ctx.nranks(), me = ctx.rank();
  const int right = (me + 1) % n, left = (me - 1 + n) % n;
  auto chunkAt = [n](int c) { return ((c % n) + n) % n; };
  const ChunkLayout layout{call.count, call.spec.blockSize, n};
  const std::vector<size_t> offsets = encodedOffsets(call, layout);
  size_t widest = 0, longest = 0;
  for (int c = 0; c < n; ++c) {
    widest = std::max(widest, offsets[c + 1] - offsets[c]);
    longest = std::max(longest, layout.length(c));
  }
  char *codes = nullptr, *received = nullptr, *accBytes = nullptr;
  SPCCL_CHECK(acquireScratch(ctx, std::max(offsets[n], 2 * widest), kScratchCodes, &codes));
  SPCCL_CHECK(acquireScratch(ctx, widest, kScratchReceived, &received));
  if (call.ring == nullptr)
    SPCCL_CHECK(acquireScratch(ctx, longest * sizeof(float), kScratchAccumulator, &accBytes));
  auto* region = reinterpret_cast<unsigned char*>(codes);
  auto* incoming = reinterpret_cast<unsigned char*>(received);
  HostRingSteps onHost(ctx, call, reinterpret_cast<float*>(accBytes));
  RingSteps& steps = call.ring != nullptr ? *call.ring : onHost;
  auto encodedSize = [&](int c) { return offsets[c + 1] - offsets[c]; };

  // 1. Reduce-scatter; the partial sum is decoded, my input added in f32,
  // and re-quantized before it moves on.
  unsigned char* outgoing = region;
  // Alone, the input is quantized only as the owned sum (step 2): encoding
  // it here too would spend the error-feedback residual twice.
  if (n > 1) SPCCL_CHECK(steps.encode(layout.begin(me), layout.length(me), outgoing));
  for (int s = 0; s < n - 1; ++s) {
    const int sent = chunkAt(me - s), arriving = chunkAt(me - s - 1);
    // outgoing is filled, and the previous step's incoming codes read.
    SPCCL_CHECK(steps.complete());
    size_t got = 0;
    SPCCL_CHECK(ctx.sendRecv(right, outgoing, encodedSize(sent), left, incoming,
                             encodedSize(arriving), &got));
    SPCCL_CHECK(checkEncodedSize(ctx, call, left, got, encodedSize(arriving)));
    SPCCL_CHECK(steps.accumulate(layout.begin(arriving), layout.length(arriving), incoming));
    if (s < n - 2)
      SPCCL_CHECK(
          steps.encodeAccumulated(layout.begin(arriving), layout.length(arriving), outgoing));
  }

  // 2. The owned chunk (the last to arrive; my whole input when n == 1).
  const int owned = chunkAt(me + 1);
  if (n == 1) SPCCL_CHECK(steps.accumulate(layout.begin(owned), layout.length(owned), nullptr));
  SPCCL_CHECK(steps.finishAccumulated(layout.begin(owned), layout.length(owned),
                                      call.op == spcclAvg ? n : 0, region + offsets[owned]));
  SPCCL_CHECK(steps.complete());

  // 3. Ring all-gather of the owners' codes, forwarded unchanged; the
  // decodes may still be running until finish.
  for (int s = 0; s < n - 1; ++s) {
    const int sent = chunkAt(me + 1 - s), arriving = chunkAt(me - s);
    size_t got = 0;
    SPCCL_CHECK(ctx.sendRecv(right, region + offsets[sent], encodedSize(sent), left,
                             region + offsets[arriving], encodedSize(arriving), &got));
    SPCCL_CHECK(checkEncodedSize(ctx, call, left, got, encodedSize(arriving)));
    SPCCL_CHECK(
        steps.decode(layout.begin(arriving), layout.length(arriving), region + offsets[arriving]));
  }
  return steps.finish();
}

}  // namespace spccl::compress
