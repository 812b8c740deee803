// The device-resident all-reduce's kernels (reduce_inputs.h), one per
// (type, op), with C names so that libspccl finds them in the fatbin with
// cuModuleGetFunction. Compiled only into that fatbin (cmake/
// SpcclDeviceImages.cmake): libspccl links no CUDA library.
//
// A plain grid-stride loop, one element per thread per step: the first
// version, not yet tuned (nor run on a GPU: docs/gpu.md).
#include <cstdint>

#include "kernels/device_reduce/reduce_inputs.h"

namespace spccl::kernels::device_reduce {

template <typename Format, typename Op>
__device__ void reduceInputs(const ReduceInputsArgs& args) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < args.count;
       i += stride)
    reduceInputsAt<Format, Op>(args, i);
}

}  // namespace spccl::kernels::device_reduce

namespace dr = spccl::kernels::device_reduce;
namespace k = spccl::kernels;

#define SPCCL_REDUCE_INPUTS_KERNEL(suffix, Format, OpName, Op)                                  \
  extern "C" __global__ void spcclReduceInputs_##suffix##_##OpName(dr::ReduceInputsArgs args) { \
    dr::reduceInputs<Format, k::Op>(args);                                                      \
  }

#define SPCCL_REDUCE_INPUTS_OPS(suffix, Format)            \
  SPCCL_REDUCE_INPUTS_KERNEL(suffix, Format, sum, SumOp)   \
  SPCCL_REDUCE_INPUTS_KERNEL(suffix, Format, prod, ProdOp) \
  SPCCL_REDUCE_INPUTS_KERNEL(suffix, Format, max, MaxOp)   \
  SPCCL_REDUCE_INPUTS_KERNEL(suffix, Format, min, MinOp)

SPCCL_REDUCE_INPUTS_OPS(i8, k::NativeFormat<int8_t>)
SPCCL_REDUCE_INPUTS_OPS(u8, k::NativeFormat<uint8_t>)
SPCCL_REDUCE_INPUTS_OPS(i32, k::NativeFormat<int32_t>)
SPCCL_REDUCE_INPUTS_OPS(u32, k::NativeFormat<uint32_t>)
SPCCL_REDUCE_INPUTS_OPS(i64, k::NativeFormat<int64_t>)
SPCCL_REDUCE_INPUTS_OPS(u64, k::NativeFormat<uint64_t>)
SPCCL_REDUCE_INPUTS_OPS(f16, k::HalfFormat)
SPCCL_REDUCE_INPUTS_OPS(f32, k::NativeFormat<float>)
SPCCL_REDUCE_INPUTS_OPS(f64, k::NativeFormat<double>)
SPCCL_REDUCE_INPUTS_OPS(bf16, k::Bfloat16Format)
