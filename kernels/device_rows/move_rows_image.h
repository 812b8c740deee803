// The fatbin of move_rows.cu, embedded in libspccl at build time
// (cmake/SpcclDeviceImages.cmake) and handed to cuModuleLoadData at run
// time. nullptr and 0 in a build without CUDA.
#pragma once

#include <cstddef>

namespace spccl::kernels::device_rows {

const unsigned char* moveRowsImage();
size_t moveRowsImageBytes();

}  // namespace spccl::kernels::device_rows
