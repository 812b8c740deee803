// The fatbin of codecs.cu, embedded in libspccl at build time
// (cmake/SpcclDeviceImages.cmake) and handed to cuModuleLoadData at run
// time. nullptr and 0 in a build without CUDA.
#pragma once

#include <cstddef>

namespace spccl::kernels::device_codecs {

const unsigned char* codecsImage();
size_t codecsImageBytes();

}  // namespace spccl::kernels::device_codecs
