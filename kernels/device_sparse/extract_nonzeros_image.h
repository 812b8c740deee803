// The fatbin of extract_nonzeros.cu, embedded in libspccl at build time
// (cmake/SpcclDeviceImages.cmake) and handed to cuModuleLoadData at run
// time. nullptr and 0 in a build without CUDA.
#pragma once

#include <cstddef>

namespace spccl::kernels::device_sparse {

const unsigned char* extractNonZerosImage();
size_t extractNonZerosImageBytes();

}  // namespace spccl::kernels::device_sparse
