// The compressed all-reduce's output decode (decode_codes.h) with a C
// name, so that libspccl finds it in the fatbin with cuModuleGetFunction.
// Compiled only into that fatbin (cmake/SpcclDeviceImages.cmake). A
// grid-stride loop, one element a step. Not yet run on a GPU (docs/gpu.md).
#include <cstdint>

#include "kernels/device_codecs/decode_codes.h"

namespace dc = spccl::kernels::device_codecs;

extern "C" __global__ void spcclDecodeCodesF32(const __grid_constant__ dc::DecodeArgs args) {
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < args.count;
       i += stride)
    dc::decodeOne(args, i);
}
