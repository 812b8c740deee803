#include "compress/device_codecs.h"

#include <algorithm>
#include <cstdint>

#include "base/check.h"
#include "device/cuda_ipc.h"
#include "device/cuda_module.h"
#include "kernels/cpu/compress/quantizer_levels.h"
#include "kernels/device_codecs/decode_codes.h"
#include "kernels/device_codecs/decode_codes_image.h"

namespace spccl::compress {

namespace {

namespace dc = kernels::device_codecs;

const device::EmbeddedModule& codecsModule() {
  static const device::EmbeddedModule module(dc::decodeCodesImage(), dc::decodeCodesImageBytes());
  return module;
}

// signedLevels() of the spec's codec, as the CUDA codecs build it.
kernels::cuda::LevelTable levelsOf(const kernels::QuantizerSpec& spec) {
  const int n = spec.bits - 1;
  if (spec.codec == kernels::Codec::Linear)
    return kernels::cuda::levelTableOf(kernels::LinearMagnitude(n), spec.bits);
  return kernels::cuda::levelTableOf(kernels::PiecewiseMagnitude(n), spec.bits);
}

}  // namespace

bool deviceCodecsAvailable() {
  return codecsModule().present() && device::cudaModuleDriver() != nullptr &&
         device::cudaIpcDriver() != nullptr && device::streamMemoryDriver() != nullptr;
}

spcclResult_t DeviceDecoder::loadKernels() {
  device::CuFunction function = nullptr;
  return codecsModule().function(dc::kDecodeKernel, &function);
}

spcclResult_t DeviceDecoder::decode(size_t begin, size_t length, const unsigned char* codes) {
  const spcclResult_t result = decodeNow(begin, length, codes);
  failed_ = failed_ || result != spcclSuccess;
  return result;
}

spcclResult_t DeviceDecoder::decodeNow(size_t begin, size_t length, const unsigned char* codes) {
  if (length == 0) return spcclSuccess;
  const size_t bytes = kernels::quantizedBytes(spec_, length);
  SPCCL_CHECK(codes_.reserve(bytes, "the codes to decode"));
  if (const device::CuResult r =
          device::cudaDriver()->memcpyHtoDAsync(codes_.address(), codes, bytes, stream_);
      r != 0)
    return SPCCL_FAIL(spcclSystemError, "%s: copying the codes to the device: %s", call_,
                      device::describeCuError("cuMemcpyHtoDAsync", r).c_str());
  bytesToDevice_ += bytes;
  device::CuFunction function = nullptr;
  SPCCL_CHECK(codecsModule().function(dc::kDecodeKernel, &function));
  dc::DecodeArgs args{};
  args.encoded = codes_.address();
  args.out = reinterpret_cast<uint64_t>(out_ + begin);
  args.count = length;
  args.blockSize = spec_.blockSize;
  args.blocks = kernels::quantizedBlockCount(spec_, length);
  args.bits = spec_.bits;
  args.levels = levelsOf(spec_);
  // Grid-stride: enough blocks to fill a GPU, not one per element.
  const auto grid = static_cast<unsigned>(
      std::clamp<uint64_t>((length + dc::kThreads - 1) / dc::kThreads, 1, uint64_t{1} << 16));
  void* params[] = {&args};
  if (const device::CuResult r = device::cudaModuleDriver()->launchKernel(
          function, grid, 1, 1, dc::kThreads, 1, 1, 0, stream_, params, nullptr);
      r != 0)
    return SPCCL_FAIL(spcclSystemError, "%s: kernel %s: %s", call_, dc::kDecodeKernel,
                      device::describeCuError("cuLaunchKernel", r).c_str());
  // The schedule reuses the host codes (and this scratch) once decode returns.
  if (const device::CuResult r = device::cudaDriver()->streamSynchronize(stream_); r != 0)
    return SPCCL_FAIL(spcclSystemError, "%s: decoding the output on the device: %s", call_,
                      device::describeCuError("cuStreamSynchronize", r).c_str());
  return spcclSuccess;
}

}  // namespace spccl::compress
