// The compressed all-reduce's device codecs (decode_codes.h,
// encode_codes.h, accumulate_codes.h) with C names, so that libspccl finds them in the fatbin
// with cuModuleGetFunction. Compiled only into that fatbin
// (cmake/SpcclDeviceImages.cmake). Grid-stride loops, one element, block
// or group a step; not tuned. Not yet run on a GPU (docs/gpu.md).
#include <cstdint>

#include "kernels/device_codecs/accumulate_codes.h"
#include "kernels/device_codecs/decode_codes.h"
#include "kernels/device_codecs/encode_codes.h"

namespace dc = spccl::kernels::device_codecs;

namespace {

template <typename Step>
__device__ void eachItem(uint64_t items, const Step& step) {
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < items;
       i += stride)
    step(i);
}

}  // namespace

extern "C" __global__ void spcclDecodeCodes(const __grid_constant__ dc::DecodeArgs args) {
  eachItem(args.count, [&](uint64_t i) { dc::decodeOne(args, i); });
}

extern "C" __global__ void spcclEncodeScales(const __grid_constant__ dc::EncodeArgs args) {
  eachItem(args.blocks, [&](uint64_t b) { dc::encodeScale(args, b); });
}

extern "C" __global__ void spcclEncodeCodes(const __grid_constant__ dc::EncodeArgs args) {
  eachItem(spccl::kernels::cuda::codeGroups(args.count),
           [&](uint64_t g) { dc::encodeGroup(args, g); });
}

extern "C" __global__ void spcclAccumulateCodes(const __grid_constant__ dc::AccumulateArgs args) {
  eachItem(args.count, [&](uint64_t i) { dc::accumulateOne(args, i); });
}
