// The fatbin of bucket_pairs.cu, embedded in libspccl at build time
// (cmake/SpcclDeviceImages.cmake) and handed to cuModuleLoadData at run
// time. nullptr and 0 in a build without CUDA.
#pragma once

#include <cstddef>

namespace spccl::kernels::device_sparse {

const unsigned char* bucketPairsImage();
size_t bucketPairsImageBytes();

}  // namespace spccl::kernels::device_sparse
