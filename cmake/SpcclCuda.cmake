# The CUDA kernels (kernels/cuda), their GPU tests (tests/gpu) and benchmark
# (perf/kernels_bench). On by default wherever the toolkit is found
# (SpcclFeatures.cmake), but kernels/cuda is left out of sanitizer builds,
# which build neither of its users; nothing else depends on them, so
# libspccl.so never needs a GPU or a driver to load.
#
# SPCCL_CUDA_ARCHS is the switch to build fewer (or other) architectures:
# the default is the lent machines' sm_90 as SASS plus compute_90 PTX, which
# the driver JIT-compiles for newer GPUs. CI can pass e.g. "90-real" alone.
option(SPCCL_BUILD_CUDA "Build the CUDA kernels, GPU tests and kernel benchmark" ${SPCCL_HAVE_CUDA})
set(SPCCL_CUDA_ARCHS "90-real;90-virtual" CACHE STRING
    "CUDA architectures (CMAKE_CUDA_ARCHITECTURES syntax) of the CUDA kernels")

if(SPCCL_BUILD_CUDA AND NOT SPCCL_HAVE_CUDA)
  message(WARNING "SPCCL_BUILD_CUDA is ON but no CUDA toolkit was found: CUDA kernels off")
  set(SPCCL_BUILD_CUDA OFF)
endif()

if(SPCCL_BUILD_CUDA)
  if(NOT CMAKE_CUDA_COMPILER AND CUDAToolkit_NVCC_EXECUTABLE)
    set(CMAKE_CUDA_COMPILER ${CUDAToolkit_NVCC_EXECUTABLE})
  endif()
  set(CMAKE_CUDA_ARCHITECTURES ${SPCCL_CUDA_ARCHS})
  enable_language(CUDA)
  # C++20 as the rest of the tree (the shared element helpers use
  # std::bit_cast). CMake 3.25 does not know nvcc's flag for it, so name it.
  if(NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
    set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
    set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
  endif()
  set(CMAKE_CUDA_STANDARD 20)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  message(STATUS "spccl CUDA kernels: ON (architectures ${SPCCL_CUDA_ARCHS})")
else()
  message(STATUS "spccl CUDA kernels: OFF")
endif()

# Warnings as errors for CUDA sources: nvcc's own, and the host compiler's
# through -Xcompiler. Bit-exactness with the CPU reference needs IEEE
# arithmetic: no fused multiply-add contraction (the host build has
# -ffp-contract=off, CMakeLists.txt, and the .cu files' host code too),
# no flush-to-zero, IEEE division.
function(spccl_set_cuda_options target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CUDA>:--Werror=all-warnings -Xcompiler=-Wall,-Wextra,-ffp-contract=off
      --expt-relaxed-constexpr -fmad=false -ftz=false -prec-div=true>)
endfunction()
