// The compressed all-reduce's output decode on the device (docs/gpu.md,
// "Compressed all-reduce of device buffers"): a chunk's or piece's
// encoding (its block scales, then its packed codes; kernels.h), copied to
// the GPU, decoded into f32, f16 or bf16 elements of the device output
// (each decoding rounded once to the type, as the CPU's dequantize). The element
// code is the CUDA codecs' (kernels/cuda/quantize_groups.h,
// decodeElementAt), which matches the CPU's decode bit for bit, so the
// output has the staged path's bits.
//
// Written once for the GPU (codecs.cu, a fatbin libspccl loads
// through the driver) and the emulated driver's host stand-in
// (tests/cuda_emulation/emulated_codec_kernels.cc), which runs this same
// per-element function. Kernel names are the ABI with the fatbin.
#pragma once

#include <cstdint>

#include "kernels/cuda/quantize_groups.h"
#include "kernels/device_codecs/element_formats.h"
#include "kernels/host_device.h"

namespace spccl::kernels::device_codecs {

constexpr unsigned kThreads = 256;

// The kernel's one parameter, by value (pointers as 64-bit integers).
struct DecodeArgs {
  uint64_t encoded;  // blocks f32 scales, then count codes of `bits` bits
  uint64_t out;      // count elements of `type`
  uint64_t count;
  uint64_t blockSize;
  uint64_t blocks;
  int32_t bits;
  int32_t type;             // ElementType of out
  cuda::LevelTable levels;  // signedLevels() of the call's codec and bits
};

constexpr const char* kDecodeKernel = "spcclDecodeCodes";

// out[i] = the decoding of element i, as the CPU's dequantize[type].
SPCCL_HOST_DEVICE inline void decodeOne(const DecodeArgs& args, uint64_t i) {
  const auto* encoded = reinterpret_cast<const unsigned char*>(args.encoded);
  withElementFormat(args.type, [&](auto format) {
    using Format = decltype(format);
    cuda::decodeElementAt(
        args.levels, args.bits, args.blockSize, encoded, encoded + args.blocks * sizeof(float), i,
        cuda::StoreDecoded<Format>{reinterpret_cast<typename Format::Storage*>(args.out)});
  });
}

}  // namespace spccl::kernels::device_codecs
