// The fatbin of reduce_inputs.cu, embedded in libspccl at build time
// (cmake/SpcclDeviceImages.cmake) and handed to cuModuleLoadData at run
// time. nullptr and 0 in a build without CUDA.
#pragma once

#include <cstddef>

namespace spccl::kernels::device_reduce {

const unsigned char* reduceInputsImage();
size_t reduceInputsImageBytes();

}  // namespace spccl::kernels::device_reduce
