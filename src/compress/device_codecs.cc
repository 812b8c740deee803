#include "compress/device_codecs.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "base/check.h"
#include "device/cuda_ipc.h"
#include "device/cuda_module.h"
#include "kernels/cpu/compress/quantizer_levels.h"
#include "kernels/device_codecs/accumulate_codes.h"
#include "kernels/device_codecs/codecs_image.h"
#include "kernels/device_codecs/decode_codes.h"
#include "kernels/device_codecs/encode_codes.h"

namespace spccl::compress {

namespace {

namespace dc = kernels::device_codecs;

const device::EmbeddedModule& codecsModule() {
  static const device::EmbeddedModule module(dc::codecsImage(), dc::codecsImageBytes());
  return module;
}

// signedLevels() of the spec's codec, as the CUDA codecs build it.
kernels::cuda::LevelTable levelsOf(const kernels::QuantizerSpec& spec) {
  const int n = spec.bits - 1;
  if (spec.codec == kernels::Codec::Linear)
    return kernels::cuda::levelTableOf(kernels::LinearMagnitude(n), spec.bits);
  return kernels::cuda::levelTableOf(kernels::PiecewiseMagnitude(n), spec.bits);
}

// Element i of a buffer of `type`, as a device address.
uint64_t elementAt(const void* base, spcclDataType_t type, size_t i) {
  return device::devicePointer(static_cast<const unsigned char*>(base) + i * spcclTypeSize(type));
}

// The kernels' code for the call's element type (f32, f16 or bf16: what
// deviceCodecsApply lets through).
int32_t elementTypeOf(spcclDataType_t type) {
  if (type == spcclFloat16) return dc::kElementF16;
  if (type == spcclBfloat16) return dc::kElementBf16;
  return dc::kElementF32;
}

}  // namespace

bool deviceCodecsAvailable() {
  return codecsModule().present() && device::cudaModuleDriver() != nullptr &&
         device::cudaIpcDriver() != nullptr && device::streamMemoryDriver() != nullptr;
}

spcclResult_t DeviceCodecs::loadKernels() {
  device::CuFunction function = nullptr;
  for (const char* kernel :
       {dc::kDecodeKernel, dc::kEncodeScalesKernel, dc::kEncodeCodesKernel, dc::kAccumulateKernel})
    SPCCL_CHECK(codecsModule().function(kernel, &function));
  return spcclSuccess;
}

spcclResult_t DeviceCodecs::note(spcclResult_t result) {
  failed_ = failed_ || result != spcclSuccess;
  return result;
}

DeviceCodecs::~DeviceCodecs() {
  if (queued_) device::cudaDriver()->streamSynchronize(stream_);
}

spcclResult_t DeviceCodecs::encode(size_t begin, size_t length, unsigned char* out) {
  return note(stageEncode(elementAt(buffers_.in, buffers_.type, begin),
                          elementTypeOf(buffers_.type), begin, length, out));
}

spcclResult_t DeviceCodecs::accumulate(size_t begin, size_t length, const unsigned char* codes) {
  return note(accumulateNow(length, elementAt(buffers_.in, buffers_.type, begin), codes, 0));
}

spcclResult_t DeviceCodecs::encodeAccumulated(size_t begin, size_t length, unsigned char* out) {
  return note(stageEncode(acc_.address(), dc::kElementF32, begin, length, out));
}

spcclResult_t DeviceCodecs::finishAccumulated(size_t begin, size_t length, int divisor,
                                              unsigned char* out) {
  return note(finishAccumulatedNow(begin, length, divisor, out));
}

spcclResult_t DeviceCodecs::complete() { return note(completeNow()); }

spcclResult_t DeviceCodecs::finish() { return note(synchronize("decoding the output")); }

spcclResult_t DeviceCodecs::sumOwned(size_t begin, size_t length,
                                     const std::vector<const unsigned char*>& decodings,
                                     int divisor, unsigned char* out) {
  return note(sumOwnedNow(begin, length, decodings, divisor, out));
}

spcclResult_t DeviceCodecs::copyOwned(size_t begin, size_t length, const unsigned char** host) {
  return note(copyOwnedNow(begin, length, host));
}

spcclResult_t DeviceCodecs::encodeOwnedSum(size_t begin, size_t length, const float* acc,
                                           unsigned char* out) {
  return note(encodeOwnedSumNow(begin, length, acc, out));
}

spcclResult_t DeviceCodecs::decode(size_t begin, size_t length, const unsigned char* codes) {
  return note(decodeNow(begin, length, codes));
}

spcclResult_t DeviceCodecs::check(device::CuResult result, const char* entry,
                                  const char* what) const {
  if (result != 0)
    return SPCCL_FAIL(spcclSystemError, "%s: %s: %s", call_, what,
                      device::describeCuError(entry, result).c_str());
  return spcclSuccess;
}

spcclResult_t DeviceCodecs::launch(const char* kernel, size_t items, void* args) const {
  device::CuFunction function = nullptr;
  SPCCL_CHECK(codecsModule().function(kernel, &function));
  // Grid-stride: enough blocks to fill a GPU, not one per item.
  const auto grid = static_cast<unsigned>(
      std::clamp<uint64_t>((items + dc::kThreads - 1) / dc::kThreads, 1, uint64_t{1} << 16));
  void* params[] = {args};
  const device::CuResult result = device::cudaModuleDriver()->launchKernel(
      function, grid, 1, 1, dc::kThreads, 1, 1, 0, stream_, params, nullptr);
  if (result != 0)
    return SPCCL_FAIL(spcclSystemError, "%s: kernel %s: %s", call_, kernel,
                      device::describeCuError("cuLaunchKernel", result).c_str());
  return spcclSuccess;
}

// in: `length` elements of `type` on the device, the call's elements
// [begin, begin + length); the residual's are updated where there is one.
// hostOut gets the encoding in stream order.
spcclResult_t DeviceCodecs::queueEncode(uint64_t in, int32_t type, size_t begin, size_t length,
                                        unsigned char* hostOut) {
  const size_t bytes = kernels::quantizedBytes(spec_, length);
  SPCCL_CHECK(codes_.reserve(bytes, "the encoding"));
  dc::EncodeArgs args{};
  args.in = in;
  args.residual =
      buffers_.residual != nullptr ? device::devicePointer(buffers_.residual + begin) : 0;
  args.type = type;
  args.out = codes_.address();
  args.count = length;
  args.blockSize = spec_.blockSize;
  args.blocks = kernels::quantizedBlockCount(spec_, length);
  args.bits = spec_.bits;
  args.linear = spec_.codec == kernels::Codec::Linear ? 1 : 0;
  args.piecewise = kernels::PiecewiseMagnitude(spec_.bits - 1);
  args.linearMagnitude = kernels::LinearMagnitude(spec_.bits - 1);
  args.levels = levelsOf(spec_);
  queued_ = true;
  // The scales first: every group reads its block's (stream order). The
  // next encode reuses codes_ after this copy (stream order too).
  SPCCL_CHECK(launch(dc::kEncodeScalesKernel, args.blocks, &args));
  SPCCL_CHECK(launch(dc::kEncodeCodesKernel, kernels::cuda::codeGroups(length), &args));
  SPCCL_CHECK(
      check(device::cudaDriver()->memcpyDtoHAsync(hostOut, codes_.address(), bytes, stream_),
            "cuMemcpyDtoHAsync", "copying the encoding to the host"));
  bytesToHost_ += bytes;
  return spcclSuccess;
}

// in (`length` elements of `type` on the device: the call's elements
// [begin, begin + length)) encoded into the pinned staging, after those
// queued since the last complete (complete first where it is full; an
// encoding larger than all of it is copied to `out` and waited for here).
spcclResult_t DeviceCodecs::stageEncode(uint64_t in, int32_t type, size_t begin, size_t length,
                                        unsigned char* out) {
  if (length == 0) return spcclSuccess;
  const size_t bytes = kernels::quantizedBytes(spec_, length);
  if (bytes > buffers_.stagingBytes) {
    SPCCL_CHECK(queueEncode(in, type, begin, length, out));
    return completeNow();
  }
  if (stagedBytes_ + bytes > buffers_.stagingBytes) SPCCL_CHECK(completeNow());
  SPCCL_CHECK(queueEncode(in, type, begin, length, buffers_.staging + stagedBytes_));
  staged_.push_back(Staged{out, stagedBytes_, bytes});
  stagedBytes_ += bytes;
  return spcclSuccess;
}

spcclResult_t DeviceCodecs::synchronize(const char* what) {
  queued_ = false;
  return check(device::cudaDriver()->streamSynchronize(stream_), "cuStreamSynchronize", what);
}

// The schedule sends the encodings once this returns.
spcclResult_t DeviceCodecs::completeNow() {
  SPCCL_CHECK(synchronize("encoding the input on the device"));
  for (const Staged& encoding : staged_)
    std::memcpy(encoding.to, buffers_.staging + encoding.offset, encoding.bytes);
  staged_.clear();
  stagedBytes_ = 0;
  return spcclSuccess;
}

// codes (host memory: the encoding of `length` elements) copied into
// codes_, queued; `what` names them in an error. The schedule keeps them
// until the next synchronisation.
spcclResult_t DeviceCodecs::copyCodesIn(const unsigned char* codes, size_t length,
                                        const char* what) {
  const size_t bytes = kernels::quantizedBytes(spec_, length);
  SPCCL_CHECK(codes_.reserve(bytes, what));
  queued_ = true;
  SPCCL_CHECK(check(device::cudaDriver()->memcpyHtoDAsync(codes_.address(), codes, bytes, stream_),
                    "cuMemcpyHtoDAsync", what));
  bytesToDevice_ += bytes;
  return spcclSuccess;
}

spcclResult_t DeviceCodecs::decodeNow(size_t begin, size_t length, const unsigned char* codes) {
  if (length == 0) return spcclSuccess;
  SPCCL_CHECK(copyCodesIn(codes, length, "copying the codes to decode to the device"));
  return queueDecode(codes_.address(), begin, length);
}

// The output's elements [begin, begin + length) = the decoding of codes
// (on the device).
spcclResult_t DeviceCodecs::queueDecode(uint64_t codes, size_t begin, size_t length) {
  queued_ = true;
  dc::DecodeArgs args{};
  args.encoded = codes;
  args.out = elementAt(buffers_.out, buffers_.type, begin);
  args.type = elementTypeOf(buffers_.type);
  args.count = length;
  args.blockSize = spec_.blockSize;
  args.blocks = kernels::quantizedBlockCount(spec_, length);
  args.bits = spec_.bits;
  args.levels = levelsOf(spec_);
  // The next decode reuses codes_ after this kernel (stream order); the
  // host codes stay as they are until finish.
  return launch(dc::kDecodeKernel, length, &args);
}

// The ring's running sum (acc_, `length` f32) = ((0 + in) + the decoding
// of codes) / divisor, each part where given (queueAccumulate). codes
// (host memory) are copied to the device first.
spcclResult_t DeviceCodecs::accumulateNow(size_t length, uint64_t in, const unsigned char* codes,
                                          int divisor) {
  if (length == 0) return spcclSuccess;
  if (codes == nullptr) return queueAccumulate(length, in, 0, divisor);
  SPCCL_CHECK(copyCodesIn(codes, length, "copying the partial sum's codes to the device"));
  return queueAccumulate(length, in, codes_.address(), divisor);
}

// acc_ (`length` f32) = ((0 + in) + the decoding of codes) / divisor, each
// part where given (in, codes: device addresses or 0; accumulate_codes.h):
// the bits of sumInputAndDecoding (loadInputChunk where codes is 0) and
// finishOwnedSum's divide.
spcclResult_t DeviceCodecs::queueAccumulate(size_t length, uint64_t in, uint64_t codes,
                                            int divisor) {
  SPCCL_CHECK(acc_.reserve(length * sizeof(float), "the running sum"));
  queued_ = true;
  dc::AccumulateArgs args{};
  args.encoded = codes;
  args.in = in;
  args.acc = acc_.address();
  args.type = elementTypeOf(buffers_.type);
  args.count = length;
  args.blockSize = spec_.blockSize;
  args.blocks = kernels::quantizedBlockCount(spec_, length);
  args.bits = spec_.bits;
  args.divisor = divisor;
  args.levels = levelsOf(spec_);
  return launch(dc::kAccumulateKernel, length, &args);
}

// The peers' codes of one owned piece (`bytes` each, in rank order) packed
// into the pinned peerCodes and copied to peerCodes_ in one copy that is
// queued, not waited for: from pageable memory the driver would stage
// each copy and return only once it is done. The pinned bytes are free
// again here: the previous piece's copy ran before its encoding's
// completeNow returned.
spcclResult_t DeviceCodecs::copyPeerCodes(const std::vector<const unsigned char*>& decodings,
                                          size_t bytes) {
  const size_t total = decodings.size() * bytes;
  if (total > buffers_.ownedBytes)
    return SPCCL_FAIL(spcclInternalError,
                      "%s: the peers' codes of an owned piece (%zu bytes) exceed their pinned "
                      "staging (%zu bytes)",
                      call_, total, buffers_.ownedBytes);
  for (size_t d = 0; d < decodings.size(); ++d)
    std::memcpy(buffers_.owned + d * bytes, decodings[d], bytes);
  SPCCL_CHECK(peerCodes_.reserve(total, "the peers' codes of the owned piece"));
  queued_ = true;
  SPCCL_CHECK(check(
      device::cudaDriver()->memcpyHtoDAsync(peerCodes_.address(), buffers_.owned, total, stream_),
      "cuMemcpyHtoDAsync", "copying the peers' codes of the owned piece to the device"));
  bytesToDevice_ += total;
  return spcclSuccess;
}

// finishOwnedSum on the device: divided (avg), encoded with the residual
// (its encoding staged for the all-gather), and that encoding, still in
// codes_, decoded into the output (stream order: before anything reuses
// codes_).
spcclResult_t DeviceCodecs::finishAccumulatedNow(size_t begin, size_t length, int divisor,
                                                 unsigned char* out) {
  if (length == 0) return spcclSuccess;
  if (divisor != 0) SPCCL_CHECK(accumulateNow(length, 0, nullptr, divisor));
  SPCCL_CHECK(stageEncode(acc_.address(), dc::kElementF32, begin, length, out));
  return queueDecode(codes_.address(), begin, length);
}

// The two-shot's owned sum of one piece, as the CPU forms it (two_shot.cc
// sumThroughAccumulator, reduceOwnedSum): acc_ = (((0 + in) + decoding 0)
// + decoding 1) + ..., one accumulate launch a peer in rank order, avg's
// division in the last (accumulate_codes.h divides after adding); then
// encoded with the residual and, once its encoding is on the host to be
// sent (the one wait of a piece), decoded into the output from codes_,
// which still holds it (stream order: the next piece's encode reuses
// codes_ after this decode).
spcclResult_t DeviceCodecs::sumOwnedNow(size_t begin, size_t length,
                                        const std::vector<const unsigned char*>& decodings,
                                        int divisor, unsigned char* out) {
  if (length == 0) return spcclSuccess;
  const size_t bytes = kernels::quantizedBytes(spec_, length);
  if (!decodings.empty()) SPCCL_CHECK(copyPeerCodes(decodings, bytes));
  const size_t last = decodings.empty() ? 0 : decodings.size() - 1;
  for (size_t d = 0; d <= last; ++d)
    SPCCL_CHECK(queueAccumulate(length, d == 0 ? elementAt(buffers_.in, buffers_.type, begin) : 0,
                                decodings.empty() ? 0 : peerCodes_.address() + d * bytes,
                                d == last ? divisor : 0));
  SPCCL_CHECK(stageEncode(acc_.address(), dc::kElementF32, begin, length, out));
  SPCCL_CHECK(completeNow());
  return queueDecode(codes_.address(), begin, length);
}

// The owned piece in its type into the pinned staging, for the host's
// owned sum (owned_sum_placement.h), waited for: the host reads it next.
// The staging is free: the previous piece's copy was read before this.
spcclResult_t DeviceCodecs::copyOwnedNow(size_t begin, size_t length, const unsigned char** host) {
  *host = buffers_.owned;
  if (length == 0) return spcclSuccess;
  const size_t bytes = length * spcclTypeSize(buffers_.type);
  if (bytes > buffers_.ownedBytes)
    return SPCCL_FAIL(spcclInternalError,
                      "%s: the owned piece (%zu bytes) exceeds its pinned staging (%zu bytes)",
                      call_, bytes, buffers_.ownedBytes);
  queued_ = true;
  SPCCL_CHECK(
      check(device::cudaDriver()->memcpyDtoHAsync(
                buffers_.owned, elementAt(buffers_.in, buffers_.type, begin), bytes, stream_),
            "cuMemcpyDtoHAsync", "copying the owned piece to the host"));
  bytesToHost_ += bytes;
  return synchronize("copying the owned piece to the host");
}

// The host's owned sum of a piece (f32, finished) copied to acc_ through
// the pinned staging (its input there was read already), then as
// finishAccumulatedNow without the divide: encoded with the residual, its
// encoding on the host on return (the one wait), and decoded into the
// output from codes_.
spcclResult_t DeviceCodecs::encodeOwnedSumNow(size_t begin, size_t length, const float* acc,
                                              unsigned char* out) {
  if (length == 0) return spcclSuccess;
  const size_t bytes = length * sizeof(float);
  if (bytes > buffers_.ownedBytes)
    return SPCCL_FAIL(spcclInternalError,
                      "%s: the owned piece's f32 sum (%zu bytes) exceeds its pinned staging "
                      "(%zu bytes)",
                      call_, bytes, buffers_.ownedBytes);
  std::memcpy(buffers_.owned, acc, bytes);
  SPCCL_CHECK(acc_.reserve(bytes, "the owned sum"));
  queued_ = true;
  SPCCL_CHECK(
      check(device::cudaDriver()->memcpyHtoDAsync(acc_.address(), buffers_.owned, bytes, stream_),
            "cuMemcpyHtoDAsync", "copying the owned sum to the device"));
  bytesToDevice_ += bytes;
  SPCCL_CHECK(stageEncode(acc_.address(), dc::kElementF32, begin, length, out));
  SPCCL_CHECK(completeNow());
  return queueDecode(codes_.address(), begin, length);
}

}  // namespace spccl::compress
