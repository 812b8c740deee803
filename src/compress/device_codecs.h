// The compressed all-reduce's codec work on device buffers (docs/gpu.md,
// "Compressed all-reduce of device buffers"), for the two-shot schedule:
// - input: the peers' chunks encoded on the device
//   (kernels/device_codecs/encode_codes.h) and only their encodings copied
//   to the host;
// - the owned sum (sumOwned): a piece at a time, the peers' codes of it
//   packed into pinned staging and copied to device scratch in one
//   asynchronous copy, decoded and added onto the owned input there, in
//   f32, in the CPU's order (accumulate_codes.h), then encoded; only that
//   encoding is copied to the host (for the all-gather), and the output is
//   decoded from the device's copy of it. Neither the owned chunk nor its
//   f32 sum crosses. Where the owned chunk in its type crosses fewer bytes
//   (owned_sum_placement.h), copyOwned brings each piece to the host
//   instead and the schedule sums it there;
// - error feedback: with a residual in device memory, every encode updates
//   it on the device, the owned sum's too, so the residual never crosses;
// - output: the peers' all-gathered codes (in host memory) copied to
//   device scratch and decoded there into the output's type
//   (kernels/device_codecs/decode_codes.h).
// And for the ring schedule (RingSteps): the running sum of a chunk in
// device scratch (f32), each arriving partial sum's codes copied there,
// decoded and added to the input chunk (accumulate_codes.h), re-encoded
// with the residual, and only the encoding copied back; the owned sum
// encoded and decoded into the output there too, so only codes cross.
// spccl's kernels, launched through the dlopen'ed driver, bit for bit the
// CPU's codecs. Every step is queued on `stream`; complete and finish
// synchronise it (the schedule sends or reuses the host memory only
// then), so one chunk is encoded and copied while the schedule sends the
// previous one, and each piece is decoded while the next one arrives.
// Errors name the call, the kernel or copy, and the driver's error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "compress/compressed_allreduce.h"
#include "device/cuda_driver.h"
#include "device/device_memory.h"
#include "spccl.h"

namespace spccl::compress {

// This build has the kernels (CUDA at build time) and the loaded driver has
// the module, stream and stream-ordered memory entry points.
bool deviceCodecsAvailable();

// The buffers of one call. in, out: count elements of `type` (f32, f16 or
// bf16) of device memory (may be the same). residual: count f32 of device
// memory, or nullptr. staging: pinned host memory where the encodings land before
// complete copies them where the schedule asked (an encoding copied
// straight into pageable memory would wait for the device). owned:
// pinned host memory for one owned piece (owned_sum_placement.h
// ownedSumStagingBytes): its peers' codes (sumOwned), so that their copy
// to the device is queued, not waited for, or the piece in its type where
// the host sums it (copyOwned), then that sum (encodeOwnedSum); nullptr
// for the ring.
struct DeviceCodecBuffers {
  spcclDataType_t type = spcclFloat32;
  const void* in = nullptr;
  void* out = nullptr;
  float* residual = nullptr;
  unsigned char* staging = nullptr;
  size_t stagingBytes = 0;
  unsigned char* owned = nullptr;
  size_t ownedBytes = 0;
};

class DeviceCodecs : public InputEncoder, public OutputDecoder, public RingSteps {
 public:
  // stream: where every copy, kernel and scratch allocation goes
  // (device/device_memory.h).
  DeviceCodecs(const char* call, device::CuStream stream, const kernels::QuantizerSpec& spec,
               const DeviceCodecBuffers& buffers)
      : call_(call),
        stream_(stream),
        spec_(spec),
        buffers_(buffers),
        codes_(stream),
        acc_(stream),
        peerCodes_(stream) {}
  // Waits for what is still queued (a call that failed midway): the
  // pinned memory it writes goes back to its pool after this.
  ~DeviceCodecs() override;
  DeviceCodecs(const DeviceCodecs&) = delete;
  DeviceCodecs& operator=(const DeviceCodecs&) = delete;

  // Loads the kernels (once per context): on the caller's thread, before a
  // host function holds its stream.
  static spcclResult_t loadKernels();

  spcclResult_t encode(size_t begin, size_t length, unsigned char* out) override;
  spcclResult_t complete() override;
  spcclResult_t sumOwned(size_t begin, size_t length,
                         const std::vector<const unsigned char*>& decodings, int divisor,
                         unsigned char* out) override;
  spcclResult_t copyOwned(size_t begin, size_t length, const unsigned char** host) override;
  spcclResult_t encodeOwnedSum(size_t begin, size_t length, const float* acc,
                               unsigned char* out) override;
  spcclResult_t decode(size_t begin, size_t length, const unsigned char* codes) override;
  spcclResult_t finish() override;
  spcclResult_t accumulate(size_t begin, size_t length, const unsigned char* codes) override;
  spcclResult_t encodeAccumulated(size_t begin, size_t length, unsigned char* out) override;
  spcclResult_t finishAccumulated(size_t begin, size_t length, int divisor,
                                  unsigned char* out) override;

  // Bytes copied so far each way.
  size_t bytesToHost() const { return bytesToHost_; }
  size_t bytesToDevice() const { return bytesToDevice_; }
  // Whether a step failed (a launch or copy: the context may be unusable).
  bool failed() const { return failed_; }

 private:
  // An encoding queued into pinned staging, copied to `to` by complete.
  struct Staged {
    unsigned char* to;
    size_t offset;
    size_t bytes;
  };

  spcclResult_t queueEncode(uint64_t in, int32_t type, size_t begin, size_t length,
                            unsigned char* hostOut);
  spcclResult_t stageEncode(uint64_t in, int32_t type, size_t begin, size_t length,
                            unsigned char* out);
  spcclResult_t accumulateNow(size_t length, uint64_t in, const unsigned char* codes, int divisor);
  spcclResult_t copyCodesIn(const unsigned char* codes, size_t length, const char* what);
  spcclResult_t queueAccumulate(size_t length, uint64_t in, uint64_t codes, int divisor);
  spcclResult_t copyPeerCodes(const std::vector<const unsigned char*>& decodings, size_t bytes);
  spcclResult_t finishAccumulatedNow(size_t begin, size_t length, int divisor, unsigned char* out);
  spcclResult_t sumOwnedNow(size_t begin, size_t length,
                            const std::vector<const unsigned char*>& decodings, int divisor,
                            unsigned char* out);
  spcclResult_t copyOwnedNow(size_t begin, size_t length, const unsigned char** host);
  spcclResult_t encodeOwnedSumNow(size_t begin, size_t length, const float* acc,
                                  unsigned char* out);
  spcclResult_t queueDecode(uint64_t codes, size_t begin, size_t length);
  spcclResult_t completeNow();
  spcclResult_t synchronize(const char* what);
  spcclResult_t decodeNow(size_t begin, size_t length, const unsigned char* codes);
  spcclResult_t note(spcclResult_t result);
  spcclResult_t launch(const char* kernel, size_t items, void* args) const;
  spcclResult_t check(device::CuResult result, const char* entry, const char* what) const;

  const char* call_;
  device::CuStream stream_;
  kernels::QuantizerSpec spec_;
  DeviceCodecBuffers buffers_;
  size_t bytesToHost_ = 0;
  size_t bytesToDevice_ = 0;
  bool failed_ = false;
  std::vector<Staged> staged_;  // queued since the last complete
  size_t stagedBytes_ = 0;
  bool queued_ = false;         // work queued since the last synchronisation
  device::StreamMemory codes_;  // one piece's encoding
  // The ring's running sum of one chunk, or the two-shot's owned sum of
  // one piece (f32).
  device::StreamMemory acc_;
  device::StreamMemory peerCodes_;  // the peers' codes of one owned piece
};

}  // namespace spccl::compress
