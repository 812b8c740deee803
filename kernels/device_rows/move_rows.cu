// The token all-reduces' row moves (move_rows.h) with C names, so that
// libspccl finds them in the fatbin with cuModuleGetFunction. Compiled
// only into that fatbin (cmake/SpcclDeviceImages.cmake). Byte-wise
// grid-stride loops: simple and type-free, not tuned. Not yet run on a GPU
// (docs/gpu.md).
#include <cstdint>

#include "kernels/device_rows/move_rows.h"

namespace dr = spccl::kernels::device_rows;

namespace {

enum class Move { Gather, Scatter, Zero };

template <Move move>
__device__ void eachByte(const dr::RowsArgs& args) {
  const uint64_t bytes = args.rowCount * args.rowBytes;
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < bytes;
       i += stride) {
    if constexpr (move == Move::Gather)
      dr::gatherByte(args, i);
    else if constexpr (move == Move::Scatter)
      dr::scatterByte(args, i);
    else
      dr::zeroByte(args, i);
  }
}

}  // namespace

extern "C" __global__ void spcclGatherRows(dr::RowsArgs args) { eachByte<Move::Gather>(args); }
extern "C" __global__ void spcclScatterRows(dr::RowsArgs args) { eachByte<Move::Scatter>(args); }
extern "C" __global__ void spcclZeroRows(dr::RowsArgs args) { eachByte<Move::Zero>(args); }
