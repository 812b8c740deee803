// The token all-reduces' row moves (move_rows.h) with C names, so that
// libspccl finds them in the fatbin with cuModuleGetFunction. Compiled
// only into that fatbin (cmake/SpcclDeviceImages.cmake). Grid-stride
// loops over 16-, 4- or 1-byte words (args.wordBytes, the same for every
// thread): type-free, not otherwise tuned. Not yet run on a GPU
// (docs/gpu.md).
#include <cstdint>

#include "kernels/device_rows/move_rows.h"

namespace dr = spccl::kernels::device_rows;

namespace {

__device__ void eachWord(dr::Move move, const dr::RowsArgs& args) {
  const uint64_t words = dr::words(args);
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < words;
       i += stride)
    dr::moveUnit(move, args, i);
}

}  // namespace

extern "C" __global__ void spcclGatherRows(dr::RowsArgs args) { eachWord(dr::Move::Gather, args); }
extern "C" __global__ void spcclScatterRows(dr::RowsArgs args) {
  eachWord(dr::Move::Scatter, args);
}
extern "C" __global__ void spcclZeroRows(dr::RowsArgs args) { eachWord(dr::Move::Zero, args); }
