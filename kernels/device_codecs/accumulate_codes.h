// The ring compressed all-reduce's running sum on the device (docs/gpu.md,
// "Compressed all-reduce of device buffers"; ring_requantize.cc): at each
// reduce-scatter step the partial sum that arrives as codes is decoded and
// added, in f32, to this rank's input chunk, into an f32 accumulator in
// device memory, which the encode kernels (encode_codes.h) then re-quantize
// with the residual. The bits are the CPU's: acc = (0 + input widened) +
// decoding (kernels.h dequantizeOnto; widenAdd then dequantizeAdd for f16
// and bf16), then divided by n for avg as divide() (the owned sum,
// finishOwnedSum). Compiled with -fmad=false, so no add is fused with the
// decoding's multiply (cmake/SpcclDeviceImages.cmake).
//
// One thread an element. Run by codecs.cu on the GPU and by the emulated
// driver's host stand-in (tests/cuda_emulation/emulated_codec_kernels.cc).
// The kernel name is the ABI with the fatbin.
#pragma once

#include <cstdint>

#include "kernels/cpu/reduce_ops.h"
#include "kernels/cuda/quantize_groups.h"
#include "kernels/device_codecs/element_formats.h"
#include "kernels/host_device.h"

namespace spccl::kernels::device_codecs {

// The kernel's one parameter, by value (pointers as 64-bit integers).
struct AccumulateArgs {
  uint64_t in;       // count elements of `type`, or 0: acc keeps its values
  uint64_t encoded;  // blocks f32 scales, then count codes of `bits` bits, or 0
  uint64_t acc;      // count f32
  uint64_t count;
  uint64_t blockSize;
  uint64_t blocks;
  int32_t bits;
  int32_t type;     // ElementType of in
  int32_t divisor;  // avg's n, or 0
  int32_t unused = 0;
  cuda::LevelTable levels;  // signedLevels() of the call's codec and bits
};

constexpr const char* kAccumulateKernel = "spcclAccumulateCodes";

// acc[i] = ((0 + in[i]) + the decoding of element i) / divisor, each part
// where it is given.
SPCCL_HOST_DEVICE inline void accumulateOne(const AccumulateArgs& args, uint64_t i) {
  auto* acc = reinterpret_cast<float*>(args.acc);
  if (args.in != 0)
    withElementFormat(args.type, [&](auto format) {
      using Format = decltype(format);
      const auto* in = reinterpret_cast<const typename Format::Storage*>(args.in);
      acc[i] = 0.0f + Format::load(in[i]);
    });
  if (args.encoded != 0) {
    const auto* encoded = reinterpret_cast<const unsigned char*>(args.encoded);
    cuda::decodeElementAt(args.levels, args.bits, args.blockSize, encoded,
                          encoded + args.blocks * sizeof(float), i, cuda::AddDecoded{acc});
  }
  if (args.divisor != 0) acc[i] = divideTruncating(acc[i], args.divisor);
}

}  // namespace spccl::kernels::device_codecs
