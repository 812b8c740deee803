#include "compress/device_codecs.h"

#include <algorithm>
#include <cstdint>

#include "base/check.h"
#include "device/cuda_ipc.h"
#include "device/cuda_module.h"
#include "kernels/cpu/compress/quantizer_levels.h"
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

uint64_t pointer(const void* p) { return reinterpret_cast<uint64_t>(p); }

}  // namespace

bool deviceCodecsAvailable() {
  return codecsModule().present() && device::cudaModuleDriver() != nullptr &&
         device::cudaIpcDriver() != nullptr && device::streamMemoryDriver() != nullptr;
}

spcclResult_t DeviceCodecs::loadKernels() {
  device::CuFunction function = nullptr;
  for (const char* kernel : {dc::kDecodeKernel, dc::kEncodeScalesKernel, dc::kEncodeCodesKernel})
    SPCCL_CHECK(codecsModule().function(kernel, &function));
  return spcclSuccess;
}

spcclResult_t DeviceCodecs::note(spcclResult_t result) {
  failed_ = failed_ || result != spcclSuccess;
  return result;
}

spcclResult_t DeviceCodecs::encode(size_t begin, size_t length, unsigned char* out) {
  return note(encodeNow(begin, length, out));
}

spcclResult_t DeviceCodecs::fetch(size_t begin, size_t length) {
  return note(fetchNow(begin, length));
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

spcclResult_t DeviceCodecs::encodeNow(size_t begin, size_t length, unsigned char* out) {
  if (length == 0) return spcclSuccess;
  const size_t bytes = kernels::quantizedBytes(spec_, length);
  SPCCL_CHECK(codes_.reserve(bytes, "the encoding"));
  dc::EncodeArgs args{};
  args.in = pointer(in_ + begin);
  args.out = codes_.address();
  args.count = length;
  args.blockSize = spec_.blockSize;
  args.blocks = kernels::quantizedBlockCount(spec_, length);
  args.bits = spec_.bits;
  args.linear = spec_.codec == kernels::Codec::Linear ? 1 : 0;
  args.piecewise = kernels::PiecewiseMagnitude(spec_.bits - 1);
  args.linearMagnitude = kernels::LinearMagnitude(spec_.bits - 1);
  args.levels = levelsOf(spec_);
  // The scales first: every group reads its block's (stream order).
  SPCCL_CHECK(launch(dc::kEncodeScalesKernel, args.blocks, &args));
  SPCCL_CHECK(launch(dc::kEncodeCodesKernel, kernels::cuda::codeGroups(length), &args));
  SPCCL_CHECK(check(device::cudaDriver()->memcpyDtoHAsync(out, codes_.address(), bytes, stream_),
                    "cuMemcpyDtoHAsync", "copying the encoding to the host"));
  bytesToHost_ += bytes;
  // The schedule sends `out` once this returns.
  return check(device::cudaDriver()->streamSynchronize(stream_), "cuStreamSynchronize",
               "encoding the input on the device");
}

spcclResult_t DeviceCodecs::fetchNow(size_t begin, size_t length) {
  if (length == 0) return spcclSuccess;
  const size_t bytes = length * sizeof(float);
  SPCCL_CHECK(check(
      device::cudaDriver()->memcpyDtoHAsync(hostIn_ + begin, pointer(in_ + begin), bytes, stream_),
      "cuMemcpyDtoHAsync", "copying the owned chunk to the host"));
  bytesToHost_ += bytes;
  return check(device::cudaDriver()->streamSynchronize(stream_), "cuStreamSynchronize",
               "copying the owned chunk to the host");
}

spcclResult_t DeviceCodecs::decodeNow(size_t begin, size_t length, const unsigned char* codes) {
  if (length == 0) return spcclSuccess;
  const size_t bytes = kernels::quantizedBytes(spec_, length);
  SPCCL_CHECK(codes_.reserve(bytes, "the codes to decode"));
  SPCCL_CHECK(check(device::cudaDriver()->memcpyHtoDAsync(codes_.address(), codes, bytes, stream_),
                    "cuMemcpyHtoDAsync", "copying the codes to the device"));
  bytesToDevice_ += bytes;
  dc::DecodeArgs args{};
  args.encoded = codes_.address();
  args.out = pointer(out_ + begin);
  args.count = length;
  args.blockSize = spec_.blockSize;
  args.blocks = kernels::quantizedBlockCount(spec_, length);
  args.bits = spec_.bits;
  args.levels = levelsOf(spec_);
  SPCCL_CHECK(launch(dc::kDecodeKernel, length, &args));
  // The schedule reuses the host codes (and this scratch) once this returns.
  return check(device::cudaDriver()->streamSynchronize(stream_), "cuStreamSynchronize",
               "decoding the output on the device");
}

}  // namespace spccl::compress
