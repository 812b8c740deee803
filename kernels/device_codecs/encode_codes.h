// The compressed all-reduce's input encode on the device (docs/gpu.md,
// "Compressed all-reduce of device buffers"): a peer's chunk, or a piece
// of one, of an f32, f16 or bf16 device input encoded standalone (its
// block scales, then its packed codes; kernels.h) into device scratch, so
// that only the encoding crosses PCIe to the host; and the owned chunk's
// f32 sum, encoded where the residual lies. The element code is the CUDA
// codecs' (kernels/cuda/quantize_groups.h: ScaleAccumulator,
// quantizeGroup), which matches the CPU's quantize[type] byte for byte,
// error feedback included: with a residual (device memory, f32) the
// encoded value is x + r and r becomes that value minus its decoding
// (AccTFM's error feedback, docs/compressed.md; kernels.h QuantizeFn), so
// the residual never leaves the device.
//
// Two kernels: the scales, one thread a block (max is order-independent,
// so a serial max is the CPU's), then the codes, one thread a group of 8
// elements (groups never share a byte or a residual). Run by codecs.cu on
// the GPU and by the emulated driver's host stand-in
// (tests/cuda_emulation/emulated_codec_kernels.cc). Names are the ABI.
#pragma once

#include <cstdint>

#include "kernels/cpu/compress/quantizer_levels.h"
#include "kernels/cuda/quantize_groups.h"
#include "kernels/device_codecs/element_formats.h"
#include "kernels/host_device.h"

namespace spccl::kernels::device_codecs {

// The kernels' one parameter, by value (pointers as 64-bit integers).
struct EncodeArgs {
  uint64_t in;        // count elements of `type`
  uint64_t residual;  // count f32 (error feedback), or 0
  uint64_t out;       // blocks f32 scales, then count codes of `bits` bits
  uint64_t count;
  uint64_t blockSize;
  uint64_t blocks;
  int32_t bits;
  int32_t linear;  // 1: the linear codec, 0: piecewise
  int32_t type;    // ElementType of in
  int32_t unused = 0;
  PiecewiseMagnitude piecewise{1};
  LinearMagnitude linearMagnitude{1};
  cuda::LevelTable levels;  // signedLevels() of the call's codec and bits
};

constexpr const char* kEncodeScalesKernel = "spcclEncodeScales";
constexpr const char* kEncodeCodesKernel = "spcclEncodeCodes";

// Block b's scale, stored at the start of the encoding: the largest
// |x + r| (kernels.h; the residual's values before this call updates them).
SPCCL_HOST_DEVICE inline void encodeScale(const EncodeArgs& args, uint64_t b) {
  const auto* residual = reinterpret_cast<const float*>(args.residual);
  const uint64_t end =
      (b + 1) * args.blockSize < args.count ? (b + 1) * args.blockSize : args.count;
  cuda::ScaleAccumulator scale;
  withElementFormat(args.type, [&](auto format) {
    using Format = decltype(format);
    const auto* in = reinterpret_cast<const typename Format::Storage*>(args.in);
    for (uint64_t i = b * args.blockSize; i < end; ++i)
      scale.add(encodedValue<Format>(in, residual, i));
  });
  const float m = scale.scale();
  memcpy(reinterpret_cast<unsigned char*>(args.out) + b * sizeof(float), &m, sizeof(float));
}

// Group g's packed codes and residuals (the scales written first, by
// encodeScale).
SPCCL_HOST_DEVICE inline void encodeGroup(const EncodeArgs& args, uint64_t g) {
  auto* residual = reinterpret_cast<float*>(args.residual);
  auto* encoded = reinterpret_cast<unsigned char*>(args.out);
  unsigned char* packed = encoded + args.blocks * sizeof(float);
  withElementFormat(args.type, [&](auto format) {
    using Format = decltype(format);
    const auto* in = reinterpret_cast<const typename Format::Storage*>(args.in);
    if (args.linear != 0)
      cuda::quantizeGroup<Format>(args.linearMagnitude, args.levels, args.bits, args.blockSize, in,
                                  residual, args.count, encoded, packed, g);
    else
      cuda::quantizeGroup<Format>(args.piecewise, args.levels, args.bits, args.blockSize, in,
                                  residual, args.count, encoded, packed, g);
  });
}

}  // namespace spccl::kernels::device_codecs
